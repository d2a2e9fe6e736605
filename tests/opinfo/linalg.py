"""Registry entries of the matrix products (``minigrad/ops/linalg.py``): ``@`` in each of
its shape cases, addmm (behind ``F.linear``), bmm, dot and einsum."""

from . import op

op("MmBackward0", lambda lib, a, b: a @ b, args=((3, 4), (4, 2)),
   out=lambda lib, a, b, out: lib.mm(a, b, out=out), out_function="mm")
op("MmBackward0", lambda lib, a, b: a.mm(b), args=((3, 4), (4, 2)), tag="mm")
op("MvBackward0", lambda lib, a, v: a @ v, args=((3, 4), (4,)),
   out=lambda lib, a, v, out: lib.mv(a, v, out=out), out_function="mv")
op("DotBackward0", lambda lib, u, v: u @ v, args=((4,), (4,)),
   out=lambda lib, u, v, out: lib.dot(u, v, out=out), out_function="dot")
op("BmmBackward0", lambda lib, a, b: lib.bmm(a, b), args=((2, 3, 4), (2, 4, 2)),
   out=lambda lib, a, b, out: lib.bmm(a, b, out=out), out_function="bmm")
# PyTorch composes matmul's general case of mm/mv/bmm and views: no node of its own
op("MatmulBackward0", lambda lib, a, b: a @ b, args=((2, 3, 4), (4, 2)), torch_node=None,
   out=lambda lib, a, b, out: lib.matmul(a, b, out=out), out_function="matmul")
op("MatmulBackward0", lambda lib, a, b: a @ b, args=((4,), (2, 4, 3)), tag="vector_batch",
   torch_node=None)
op("AddmmBackward0", lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2),
   args=((2,), (3, 4), (4, 2)),
   out=lambda lib, c, a, b, out: lib.addmm(c, a, b, beta=0.5, alpha=2, out=out),
   out_function="addmm")
op("AddmmBackward0", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
   args=((3, 4), (2, 4), (2,)), tag="linear")
# minigrad's one einsum node, renamed as PyTorch's last step (its einsum is bmm and views)
op("EinsumBackward0", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), args=((3, 4), (4, 2)),
   torch_node="ViewBackward0")
op("EinsumBackward0", lambda lib, a, b: lib.einsum("bij,bj->bi", a, b), args=((2, 3, 4), (2, 4)),
   tag="batch", torch_node="ViewBackward0")
