"""Layers that compute in float32 (the papers') or in bfloat16, on float32 variables.

bfloat16 keeps float32's exponent range with an 8-bit significand, so training in it needs no
loss scaling (Kalamkar et al., 2019, "A Study of BFLOAT16 for Deep Learning Training"); as in
mixed-precision training (Micikevicius et al., 2018), the variables, the optimizers' state and
the checkpoints stay float32, and each layer here casts its float32 variables to the dtype of
its input (the casts' gradients come back as float32). A network starts computing in its
`compute_dtype` where it turns frames into numbers (impala.frames_to_float) and gives float32
from its output layers on (`Linear(..., output=True)`), so every loss and RL operator
(agents/ops) runs in float32. The LSTMs (snt.LSTM) take float32 too: their products, one
small one per step, ran slower in bfloat16 (Reactor's update 0.87x float32's, 1.17x with
float32 LSTMs: benchmarks/README.md). In float32 every cast here is the identity: the papers'
networks, unchanged.
"""
import sonnet as snt
import tensorflow as tf

from agents.ops import choices


def compute_dtype(precision: str) -> tf.DType:
    """The dtype a network of `precision` (one of `choices.PRECISIONS`, each a dtype's name)
    computes its layers in."""
    if precision not in choices.PRECISIONS:
        raise ValueError(f'precision must be one of {choices.PRECISIONS}, got {precision!r}')
    return tf.as_dtype(precision)


def _float32_spec(inputs: tf.Tensor) -> tf.TensorSpec:
    """What a layer builds its variables from: the input's shape, always float32."""
    return tf.TensorSpec(inputs.shape, tf.float32)


class Linear(snt.Linear):
    """snt.Linear on float32 variables, computing in its input's dtype; an `output` layer (a
    network's logits, values, actions) computes in float32 whatever its input."""

    def __init__(self, output_size: int, output: bool = False, w_init=None,
                 name: str | None = None):
        super().__init__(output_size, w_init=w_init, name=name)
        self._output = output

    def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
        if self._output:
            inputs = tf.cast(inputs, tf.float32)
        self._initialize(_float32_spec(inputs))
        outputs = tf.matmul(inputs, tf.cast(self.w, inputs.dtype))
        return outputs + tf.cast(self.b, inputs.dtype)


class Conv2D(snt.Conv2D):
    """snt.Conv2D (string padding) on float32 variables, computing in its input's dtype."""

    def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
        self._initialize(_float32_spec(inputs))
        outputs = tf.nn.convolution(inputs, tf.cast(self.w, inputs.dtype), strides=self.stride,
                                    padding=self.conv_padding, dilations=self.rate,
                                    data_format=self.data_format)
        return tf.nn.bias_add(outputs, tf.cast(self.b, inputs.dtype),
                              data_format=self.data_format)
