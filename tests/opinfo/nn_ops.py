"""Registry entries of the convolution, padding, pooling and normalization ops
(``minigrad/ops/convolution.py``, ``pooling.py``, ``normalization.py``) and of the ops
their backward becomes under create_graph. Corners: ties inside a max-pool window."""

from . import base, grad_of, op

IMAGE = (2, 2, 5, 5)


def F(lib):
    return lib.nn.functional


op("ConvolutionBackward0", lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding=1),
   args=(IMAGE, (3, 2, 3, 3), (3,)), tol={"float32": (1e-4, 1e-5)})
op("ConvolutionBackward0", lambda lib, x, w: F(lib).conv2d(x, w, stride=2, dilation=1,
                                                           groups=2),
   args=(IMAGE, (4, 1, 2, 2)), tol={"float32": (1e-4, 1e-5)}, tag="groups")
op("Im2ColBackward0", lambda lib, x, w, g: grad_of(lib, lambda t: F(lib).conv2d(x, t), w, g),
   args=(IMAGE, (3, 2, 3, 3), (2, 3, 3, 3)), tol={"float32": (1e-4, 1e-5)},
   torch_node="ConvolutionBackwardBackward0")
op("Col2ImBackward0", lambda lib, x, w, g: grad_of(lib, lambda t: F(lib).conv2d(t, w), x, g),
   args=(IMAGE, (3, 2, 3, 3), (2, 3, 3, 3)), tol={"float32": (1e-4, 1e-5)},
   torch_node="ConvolutionBackwardBackward0")
op("ConstantPadNdBackward0", lambda lib, x: F(lib).pad(x, (1, 2, 0, 1), value=0.5))
op("ConstantPadNdBackward0", lambda lib, x: F(lib).pad(x, (-1, 1)), tag="negative")
op("MaxPool2DWithIndicesBackward0", lambda lib, x: F(lib).max_pool2d(x, 2), args=(IMAGE,),
   distinct=True)
op("MaxPool2DWithIndicesBackward0", lambda lib, x: F(lib).max_pool2d(x, 3, 1, padding=1),
   args=(IMAGE,), corners=(9.0, 9.0), tag="ties")
op("MaxPool2DWithIndicesBackwardBackward0",
   lambda lib, x, g: grad_of(lib, lambda t: F(lib).max_pool2d(t, 2), x, g),
   args=(IMAGE, (2, 2, 2, 2)), distinct=True)
op("AvgPool2DBackward0", lambda lib, x: F(lib).avg_pool2d(x, 2), args=(IMAGE,))
op("AvgPool2DBackward0",
   lambda lib, x: F(lib).avg_pool2d(x, 3, 2, padding=1, count_include_pad=False),
   args=(IMAGE,), tag="padding")
op("AvgPool2DBackwardBackward0",
   lambda lib, x, g: grad_of(lib, lambda t: F(lib).avg_pool2d(t, 2), x, g),
   args=(IMAGE, (2, 2, 2, 2)))
op("AdaptiveAvgPool2DBackward0", lambda lib, x: F(lib).adaptive_avg_pool2d(x, (2, 3)),
   args=(IMAGE,))
op("NativeLayerNormBackward0", lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b),
   args=((3, 4), (4,), (4,)), tol={"float32": (1e-4, 1e-5)})
op("NativeLayerNormBackward0", lambda lib, x: F(lib).layer_norm(x, (3, 4)), args=((2, 3, 4),),
   tol={"float32": (1e-4, 1e-5)}, tag="no_affine")
op("NativeBatchNormBackward0",
   lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b, training=True),
   args=((4, 3), (3,), (3,)), tol={"float32": (1e-4, 1e-5)})
op("NativeBatchNormBackward0",
   lambda lib, x: F(lib).batch_norm(x, None, None, training=True), args=((2, 3, 2, 2),),
   tol={"float32": (1e-4, 1e-5)}, tag="images")
op("ConvolutionBackward0", lambda lib, x, w, b: F(lib).conv1d(x, w, b, padding=1, stride=2),
   args=((2, 4, 7), (3, 4, 3), (3,)), tol={"float32": (1e-4, 1e-5)}, tag="conv1d")
op("ConvolutionBackward0", lambda lib, x, w: F(lib).conv1d(x, w, groups=2, dilation=2),
   args=((2, 4, 7), (4, 2, 2)), tol={"float32": (1e-4, 1e-5)}, tag="conv1d_groups")
op("NativeGroupNormBackward0", lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b),
   args=((3, 4, 5), (4,), (4,)), tol={"float32": (1e-4, 1e-5)})
op("NativeGroupNormBackward0", lambda lib, x: F(lib).group_norm(x, 3), args=((2, 6, 2, 2),),
   tol={"float32": (1e-4, 1e-5)}, tag="no_affine")
op("NativeBatchNormBackward0",
   lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b, training=True),
   args=((3, 2, 2, 3), (2,), (2,)), tol={"float32": (1e-4, 1e-5)}, tag="batchnorm2d")
op("ConvolutionBackward0",
   lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
   args=(IMAGE, (2, 3, 3, 3), (3,)), tol={"float32": (1e-4, 1e-5)}, tag="transposed")
op("ConvolutionBackward0",
   lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=(1, 2), groups=2, dilation=2),
   args=(IMAGE, (2, 2, 2, 3)), tol={"float32": (1e-4, 1e-5)}, tag="transposed_groups")
op("ConvolutionBackward0",
   lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
   args=((2, 4, 5), (4, 3, 3), (3,)), tol={"float32": (1e-4, 1e-5)}, tag="transposed1d")
op("ConvolutionBackward0",
   lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, dilation=3, output_padding=(2, 1)),
   args=(IMAGE, (2, 3, 2, 2), (3,)), tol={"float32": (1e-4, 1e-5)}, tag="transposed_extra")
base("Resample", "the interpolations' shared class (ops/upsampling.py): each mode's node is a "
     "subclass named as PyTorch's")
op("UpsampleNearest2DBackward0", lambda lib, x: F(lib).interpolate(x, scale_factor=2),
   args=(IMAGE,))
op("UpsampleNearest1DBackward0", lambda lib, x: F(lib).interpolate(x, size=8), args=((2, 3, 5),))
op("UpsampleNearestExact2DBackward0",
   lambda lib, x: F(lib).interpolate(x, size=(3, 7), mode="nearest-exact"), args=(IMAGE,))
op("UpsampleNearestExact1DBackward0",
   lambda lib, x: F(lib).interpolate(x, scale_factor=1.5, mode="nearest-exact"),
   args=((2, 3, 5),))
op("UpsampleBilinear2DBackward0",
   lambda lib, x: F(lib).interpolate(x, scale_factor=1.7, mode="bilinear"), args=(IMAGE,))
op("UpsampleBilinear2DBackward0",
   lambda lib, x: F(lib).interpolate(x, size=(3, 8), mode="bilinear", align_corners=True),
   args=(IMAGE,), tag="align_corners")
op("UpsampleLinear1DBackward0",
   lambda lib, x: F(lib).interpolate(x, size=9, mode="linear"), args=((2, 3, 5),))
