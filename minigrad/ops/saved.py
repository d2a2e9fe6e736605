"""What a backward gets, under ``create_graph=True``, for a float array its op computed in
forward and saved: ``ComputedInForward``, a stand-in that refuses every use.

Under ``create_graph`` a backward runs on Tensors and is recorded; a value forward computed
(``3 * a * a``) has no history, so autograd would take it for a constant and the second
derivative would be silently wrong. ``Op.saved_tensors`` hands backward this stand-in
instead (unless the op declares the value a constant: ``Op.constants``), so the first use
raises a RuntimeError that names the op, the saved value and the two ways to fix it. The
rules themselves are in ``op.py``'s docstring ("Rules of a backward").
"""

import inspect

__all__ = ["ComputedInForward"]

_get = object.__getattribute__


class ComputedInForward:
    """A saved float array that forward computed (neither an input nor the output), handed
    to backward under ``create_graph=True`` in its place: any use raises RuntimeError.

    ``repr`` is the one thing it answers (with the error's text), so that a traceback or a
    debugger shows what it is instead of failing again."""

    __slots__ = ("op", "position")

    def __init__(self, op, position):
        # op: the class of the op that saved the value; position: its index among the
        # values save_for_backward kept (its position among backward's saved arguments).
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "position", position)

    def message(self, use):
        """The error for ``use`` (how backward tried to use the value, e.g. ``"*"``)."""
        try:
            op = _get(self, "op")
        except SystemError:  # numpy called us with our error from isinstance(self, ndarray)
            op = _get(self, "op")  # still set (np.where(m, v, 0)): now it is cleared
        position = _get(self, "position")
        name = op.__name__
        return (
            f"{name}.backward used saved value {position}{_parameter(op, position)} "
            f"under create_graph=True (how: {use}), but it is an array {name}.forward "
            "computed: under create_graph a value computed in forward is a constant to "
            "autograd (it has no history), so the second derivative would silently miss "
            "how it depends on the inputs. Fix it in one of two ways: recompute it in "
            "backward from the saved inputs or output when grad is a Tensor (branch on "
            "`if formulas.is_array(grad): <arrays> else: <recompute from the inputs>`), "
            "or, if it truly is a constant of the graph (a mask, a random draw, a "
            f"scale), declare it on the class: `constants = ({position},)`.")

    def __repr__(self):
        return f"<ComputedInForward: {ComputedInForward.message(self, 'printed')}>"

    def __getattribute__(self, name):
        # isinstance asks for __class__: a Tensor operator (grad * value) checks it first
        use = "its type checked, by an operation" if name == "__class__" else f".{name}"
        raise RuntimeError(ComputedInForward.message(self, use))

    def __setattr__(self, name, value):
        raise RuntimeError(ComputedInForward.message(self, f"attribute .{name} set"))

    def __delattr__(self, name):
        raise RuntimeError(ComputedInForward.message(self, f"attribute .{name} deleted"))

    # numpy asks these before anything else (np.exp(v), array + v, np.sum(v), np.asarray(v))
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise RuntimeError(ComputedInForward.message(self, f"numpy {ufunc.__name__}"))

    def __array_function__(self, func, types, args, kwargs):
        raise RuntimeError(ComputedInForward.message(self, f"numpy {func.__name__}"))

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(ComputedInForward.message(self, "converted to an array"))


def _refusal(use):
    """A special method that raises the stand-in's error for ``use``."""
    def refuse(self, *args, **kwargs):
        raise RuntimeError(ComputedInForward.message(self, use))
    return refuse


# The special methods Python looks up on the type (so __getattribute__ never sees them):
# each raises, named by how the value was used.
_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
              "mod": "%", "pow": "**", "matmul": "@", "divmod": "divmod", "and": "&",
              "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}
for _name, _symbol in _OPERATORS.items():
    setattr(ComputedInForward, f"__{_name}__", _refusal(_symbol))
    setattr(ComputedInForward, f"__r{_name}__", _refusal(f"{_symbol} (on the right)"))
    if _name != "divmod":
        setattr(ComputedInForward, f"__i{_name}__", _refusal(f"{_symbol}="))
for _name, _use in {"lt": "<", "le": "<=", "eq": "==", "ne": "!=", "gt": ">", "ge": ">=",
                    "neg": "unary -", "pos": "unary +", "abs": "abs()", "invert": "~",
                    "bool": "bool()", "len": "len()", "iter": "iteration",
                    "reversed": "reversed()", "contains": "`in`", "getitem": "indexing",
                    "setitem": "item assignment", "delitem": "item deletion",
                    "int": "int()", "float": "float()", "complex": "complex()",
                    "index": "used as an index", "round": "round()", "trunc": "trunc()",
                    "floor": "floor()", "ceil": "ceil()", "hash": "hash()",
                    "call": "called", "format": "formatted", "str": "str()",
                    "enter": "`with`", "exit": "`with`", "reduce": "pickled",
                    "reduce_ex": "pickled", "copy": "copied", "deepcopy": "copied"}.items():
    setattr(ComputedInForward, f"__{_name}__", _refusal(_use))
del _name, _symbol, _use


def _parameter(op, position):
    """`` (`name`)``: the name backward gives saved value ``position``, when it has one."""
    try:
        parameters = list(inspect.signature(op.backward).parameters.values())
    except (TypeError, ValueError):  # a builtin or odd callable: no names to give
        return ""
    named = [p for p in parameters[2:]  # after self and grad
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return f" (`{named[position].name}`)" if position < len(named) else ""
