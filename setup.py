"""distrl: TF2 reproductions of IMPALA, Ape-X, LASER and Reactor."""
import setuptools

# The stack of DEVELOPERS.md, pinned to the versions tried together.  TensorFlow comes from an
# extra so that a GPU machine can take the CUDA build: `pip install -e .[cpu]` or `.[gpu]`.
INSTALL_REQUIRES = [
    'absl-py>=2.0',
    'ale-py==0.10.2',            # ships its ROMs: no download step
    'dm-control==1.0.50',
    'dm-env==1.6',
    'dm-reverb==0.14.0',
    'dm-sonnet==2.0.2',
    'dm-tree==0.1.10',
    'matplotlib>=3.7',
    'ml-collections==1.1.0',
    'mujoco>=3,<4',
    'numpy>=1.24,<2',
    'opencv-python-headless==4.10.0.84',
    'portpicker>=1.5',
    'tensorflow-probability==0.23.0',
]

setuptools.setup(
    name='distrl',
    version='0.1.0',
    description=__doc__,
    python_requires='>=3.11,<3.12',
    packages=setuptools.find_packages(include=[
        'agents', 'agents.*', 'environments', 'environments.*', 'reverb_tables',
        'reverb_tables.*', 'launch', 'launch.*', 'paper_tables', 'paper_tables.*',
        'benchmarks', 'benchmarks.*']),
    package_data={'paper_tables': ['data/*.csv', 'data/*.md']},
    install_requires=INSTALL_REQUIRES,
    extras_require={
        'cpu': ['tensorflow-cpu==2.15.1'],
        'gpu': ['tensorflow[and-cuda]==2.15.1'],
        'test': ['pytest>=7', 'pytest-timeout>=2', 'pytest-xdist>=3', 'psutil>=5'],
        # Many machines: --launcher=ray (launch/ray_launcher.py); installed by `make test`.
        'ray': ['ray==2.60.0'],
    },
)
