"""Registry entries of the activation functions (``minigrad/ops/activations.py``) and the
ops their backward becomes under create_graph. Corners: 0 where the slope jumps, the bounds
of hardtanh and relu6, softplus's threshold."""

from . import grad_of, op

TWO = ((3, 4), (3, 4))


def F(lib):
    return lib.nn.functional


op("ReluBackward0", lambda lib, x: F(lib).relu(x), corners=(0.0, -0.0),
   inplace=lambda lib, x: x.relu_(), inplace_method="relu_")
op("ReluBackward0", lambda lib, x: F(lib).relu(x.clone(), inplace=True), corners=(0.0, -0.0),
   tag="functional_inplace")
op("LeakyReluBackward0", lambda lib, x: F(lib).leaky_relu(x, 0.1), corners=(0.0, -0.0))
op("LeakyReluBackward1", lambda lib, x: F(lib).leaky_relu(x.clone(), 0.1, inplace=True),
   corners=(0.0, -0.0))
op("GeluBackward0", lambda lib, x: F(lib).gelu(x), corners=(0.0,))
op("GeluBackward0", lambda lib, x: F(lib).gelu(x, approximate="tanh"), corners=(0.0,),
   tag="tanh")
op("SiluBackward0", lambda lib, x: F(lib).silu(x), corners=(0.0,))
op("MishBackward0", lambda lib, x: F(lib).mish(x), corners=(0.0,))
op("LogSigmoidBackward0", lambda lib, x: F(lib).logsigmoid(x), corners=(0.0, 40.0, -40.0))
# PyTorch's softplus: first derivative smooth up to beta x > threshold, its double backward
# masks with beta x < threshold: at beta x == threshold exactly the second derivative is 0
SOFTPLUS_CORNER = ("at beta * x == threshold exactly PyTorch's second derivative is 0 (its "
                   "double backward masks beta x < threshold), minigrad's is the smooth one")
op("SoftplusBackward0", lambda lib, x: F(lib).softplus(x, beta=2, threshold=5),
   corners=(2.5, 0.0, -2.5, 2.5000001), xfail={"gradgrad": SOFTPLUS_CORNER})
op("SoftplusBackward0", lambda lib, x: F(lib).softplus(x), corners=(20.0, 0.0), tag="default",
   xfail={"gradgrad-float64": SOFTPLUS_CORNER})
op("EluBackward0", lambda lib, x: F(lib).elu(x, alpha=1.5), corners=(0.0, -0.0))
op("EluBackward0", lambda lib, x: F(lib).selu(x), corners=(0.0, -0.0), tag="selu")
op("EluBackward1", lambda lib, x: F(lib).elu(x.clone(), inplace=True), corners=(0.0, -0.0))
op("HardtanhBackward0", lambda lib, x: F(lib).hardtanh(x, -0.5, 0.5),
   corners=(-0.5, 0.5, 0.0), inplace=lambda lib, x: F(lib).hardtanh(x, -0.5, 0.5, inplace=True))
op("HardtanhBackward0", lambda lib, x: F(lib).relu6(x * 4), corners=(0.0, 1.5, -0.0),
   tag="relu6")
# hardswish: the slope changes at -3 and 3 (0 up to -3, x/3 + 1/2 between, 1 from 3 on)
op("HardswishBackward0", lambda lib, x: F(lib).hardswish(x * 4), corners=(-0.75, 0.75, 0.0),
   inplace=lambda lib, x: F(lib).hardswish(x, inplace=True))
op("HardswishBackwardBackward0",
   lambda lib, x, g: grad_of(lib, F(lib).hardswish, x * 4, g), args=TWO,
   corners=(-0.75, 0.75, 0.0))
op("ThresholdBackwardBackward0",
   lambda lib, x, g: grad_of(lib, F(lib).relu, x, g), args=TWO, corners=(0.0,))
op("LeakyReluBackwardBackward0",
   lambda lib, x, g: grad_of(lib, lambda t: F(lib).leaky_relu(t, 0.2), x, g), args=TWO,
   corners=(0.0,))
op("HardtanhBackwardBackward0",
   lambda lib, x, g: grad_of(lib, lambda t: F(lib).hardtanh(t, -0.5, 0.5), x, g), args=TWO,
   corners=(-0.5, 0.5))
