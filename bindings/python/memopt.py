"""memopt for Python: ctypes over libmemopt.so, no build step.

    import memopt
    r = memopt.validate(open("train.yaml").read())          # a whole training YAML
    r = memopt.validate(text, model="llama2-7b")             # or a preset / model file
    if r["valid"]:
        plan = memopt.expand(text, model="llama2-7b")        # {"layers": [...], "warnings": [...]}

The shapes are those of `memopt validate --json` and `memopt expand --json`
(docs/api.md); memopt.estimate(...) gives that of `memopt estimate --json`, and
takes time_limit= (seconds) and cancel= (a callable) to bound its work:
    memopt.estimate(text, time_limit=2.0)                 # WorkLimit after 2 s The
library is found through $MEMOPT_LIB, else ./build/libmemopt.so (a source
checkout), else the system's (ctypes.util.find_library("memopt"), then
libmemopt.so.0). Every call is independent and thread-safe: handles are
created and freed inside the call.
"""

import ctypes
import ctypes.util
import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

if sys.version_info >= (3, 8):
    from typing import TypedDict
else:  # pragma: no cover - the typed results need 3.8; older pythons get plain dicts
    TypedDict = dict

# ---- the results' types (what each call returns; plain dicts, typed) ------


class Diagnostic(TypedDict, total=False):
    code: str          # the rule code (docs/rules.md)
    message: str
    line: int          # 1-based; 0 when the finding has no position
    column: int
    path: str          # e.g. "recompute.select_module['.*mlp'][0]"
    file: str          # "config" or "model" (or the name given)
    hint: str
    layers: str        # "8-11, 14"


class CheckResult(TypedDict):
    valid: bool
    errors: List[Diagnostic]
    warnings: List[Diagnostic]


class ExpandResult(TypedDict):
    layers: List[Dict[str, Any]]   # {"layer", "type", "mtp", "actions": [...]}
    prefetch: int
    warnings: List[Diagnostic]


class AccuracyRun(TypedDict):
    run: str               # e.g. "Ascend 910B A: GQA, pp 2, stage 0"
    set: str               # "calibration", "held-out", ...
    measured_mib: float
    estimated_mib: float
    error_percent: float   # (estimated - measured) / measured
    source: str            # where the measured figure comes from


class Accuracy(TypedDict):
    """How the rules in use did on measured runs (the API's "accuracy")."""
    rules: str             # "mindspore" or "pytorch"
    note: str              # what the rules assume
    runs: List[AccuracyRun]
    median_abs_error_percent: Optional[float]   # None when no run was measured
    max_abs_error_percent: Optional[float]
    worst_run: Optional[str]
    table: Optional[str]   # the accuracy.tsv read; None when none was found


class Assumed(TypedDict):
    path: str              # e.g. "model.kv_channels"
    value: str
    source: str            # why this value


class Estimate(TypedDict):
    peak_bytes: int
    reserved_peak_bytes: int
    capacity_bytes: int
    framework: str
    overhead_percent: float
    stages: List[Dict[str, Any]]
    layers: List[Dict[str, Any]]
    time: Optional[Dict[str, Any]]
    accuracy: Accuracy     # the trust signals: the rules' measured accuracy,
    assumed: List[Assumed]  # the values the model import filled in,
    warnings: List[Diagnostic]  # and (code "unmodelled") what is left out


class PlanResult(TypedDict):
    fits: bool
    exact: bool
    budget_bytes: int
    peak_bytes: int
    overhead_percent: float
    config: str        # the plan as the three sections (canonical YAML)
    warnings: List[Diagnostic]


class MigrateResult(TypedDict):
    yaml: str          # the file with recompute_config replaced by the sections
    warnings: List[Diagnostic]   # what had no equivalent (no-equivalent)

class SizeParallel(TypedDict, total=False):
    world_size: int
    data_parallel: int
    data_parallel_shard: int
    tensor_parallel: int
    pipeline_parallel: int
    virtual_pipeline: int
    expert_parallel: int
    expert_tensor_parallel: int    # only when the framework sets it apart from TP
    context_parallel: int
    sequence_parallel: bool
    distributed_optimizer: bool


class SizeTraining(TypedDict):
    micro_batch_size: int
    micro_batch_num: int


class SizeLayout(TypedDict, total=False):
    parallel: SizeParallel
    training: SizeTraining
    peak_bytes: int              # the estimate's allocated peak with the plan
    budget_bytes: int
    step_seconds: float          # the estimate's step time with the plan
    tokens_per_second_per_device: float
    mfu: float
    fits: bool
    pareto: bool                 # on the memory / step-time front
    plan: str                    # what the plan does, one line
    config: str                  # the three sections; with base=, the base rewritten
    model: str                   # the whole model file with this layout
    megatron_args: str           # framework pytorch: the layout as Megatron-LM arguments
    megatron_plan_note: str      # framework pytorch: why the plan has no Megatron-LM flags


class SizeRejection(TypedDict, total=False):
    code: str                    # the rule, stable ("tp_kv_groups"): switch on this
    reason: str                  # its words, with its numbers
    params: Dict[str, int]       # the numbers the rule compared, by name
    field: str                   # a rule of the model's `parallel` rule (ep_groups, ...): the model field it names
    count: int                   # layouts it rejected


class SizeResult(TypedDict):
    layouts: List[SizeLayout]    # fitting first, each group fastest first
    rejected: Dict[str, int]     # reason -> layouts it rejected
    rejections: List[SizeRejection]  # the same by rule code and parameters
    accepted: int
    estimated: int
    planned: int
    complete: bool               # False: time_limit / cancel stopped the search
    smallest_devices: Optional[int]


Model = Union[str, bytes, None]

__all__ = ["validate", "expand", "estimate", "size", "plan", "migrate", "ledger", "presets",
           "has_estimator", "MemoptError", "InvalidConfig", "Unavailable", "WorkLimit",
           "library_path", "parse_size", "Diagnostic", "CheckResult", "ExpandResult", "Estimate",
           "PlanResult", "MigrateResult", "Accuracy", "AccuracyRun", "Assumed", "SizeLayout",
           "SizeParallel", "SizeTraining", "SizeResult", "SizeRejection"]
__version__ = "0.1.0"

# ---- the C API's structures (memopt.h), field for field ---------------------


class _Error(ctypes.Structure):            # mo_error
    _fields_ = [("code", ctypes.c_int),
                ("line", ctypes.c_int),
                ("column", ctypes.c_int),
                ("text", ctypes.c_char * 256)]


class _Diag(ctypes.Structure):             # mo_diag
    _fields_ = [("severity", ctypes.c_int),    # mo_severity: 0 error, 1 warning
                ("code", ctypes.c_char_p),
                ("message", ctypes.c_char_p),
                ("hint", ctypes.c_char_p),
                ("path", ctypes.c_char_p),
                ("file", ctypes.c_char_p),
                ("line", ctypes.c_int),
                ("column", ctypes.c_int),
                ("layers", ctypes.c_char_p)]   # "8-11, 14" or NULL


class _Input(ctypes.Structure):            # mo_input
    _fields_ = [("config", ctypes.c_char_p),
                ("config_len", ctypes.c_size_t),
                ("config_name", ctypes.c_char_p),
                ("preset", ctypes.c_char_p),
                ("model", ctypes.c_char_p),
                ("model_len", ctypes.c_size_t),
                ("model_name", ctypes.c_char_p),
                ("devices", ctypes.c_int64),
                ("limits", ctypes.c_void_p),   # const mo_limits *: NULL = defaults
                ("shared_model", ctypes.c_void_p),  # const mo_model *: NULL here
                ("model_dir", ctypes.c_char_p),  # a launch script's folder: its sourced files
                ("config_dir", ctypes.c_char_p)]  # where a YAML's paths open: NULL, not read


class _Rule(ctypes.Structure):             # mo_rule
    _fields_ = [("section", ctypes.c_char_p),
                ("key", ctypes.c_char_p),
                ("line", ctypes.c_int)]


class _Action(ctypes.Structure):           # mo_action
    _fields_ = [("path", ctypes.c_char_p),
                ("action", ctypes.c_int),      # mo_action_kind
                ("rule", _Rule)]


MO_EST_BUCKETS = 10                        # enum mo_estimate_bucket (pipeline_inputs last)


class _EstStage(ctypes.Structure):         # mo_estimate_stage
    _fields_ = [("stage", ctypes.c_int64),
                ("peak_bytes", ctypes.c_uint64),
                ("reserved_peak_bytes", ctypes.c_uint64),
                ("peak_event", ctypes.c_char_p),
                ("weights_bytes", ctypes.c_uint64),
                ("gradients_bytes", ctypes.c_uint64),
                ("optimizer_bytes", ctypes.c_uint64),
                ("activations_bytes", ctypes.c_uint64),
                ("swap_buffer_bytes", ctypes.c_uint64),
                ("peak_by_bucket", ctypes.c_uint64 * MO_EST_BUCKETS),
                ("first_layer", ctypes.c_int64),
                ("num_layers", ctypes.c_int64),
                ("in_flight", ctypes.c_int64),
                ("compute_seconds", ctypes.c_double),
                ("overhead_seconds", ctypes.c_double),
                ("between_steps_bytes", ctypes.c_uint64)]


_TIME_TERMS = ("step_seconds", "compute_seconds", "gemm_seconds", "attention_seconds",
               "memory_bound_seconds", "comm_tp_seconds", "comm_cp_seconds",
               "comm_ep_seconds", "comm_pp_seconds", "comm_dp_seconds", "bubble_seconds",
               "optimizer_seconds", "recompute_seconds", "swap_seconds", "fixed_seconds",
               "kernels")


class _EstTime(ctypes.Structure):          # mo_estimate_time
    _fields_ = [(n, ctypes.c_double) for n in _TIME_TERMS] + [
        ("slowest_stage", ctypes.c_size_t),
        ("tokens_per_second_per_device", ctypes.c_double),
        ("model_flops", ctypes.c_double), ("mfu", ctypes.c_double),
        ("largest_term", ctypes.c_char_p)]


class _EstLayer(ctypes.Structure):         # mo_estimate_layer
    _fields_ = [("layer", ctypes.c_int64),
                ("stage", ctypes.c_int64),
                ("type", ctypes.c_char_p),
                ("activation_bytes", ctypes.c_uint64),
                ("baseline_activation_bytes", ctypes.c_uint64),
                ("recomputed_bytes", ctypes.c_uint64),
                ("swap_bytes", ctypes.c_uint64),
                ("recompute_flops", ctypes.c_double),
                ("forward_flops", ctypes.c_double),
                ("comm_recompute_bytes", ctypes.c_uint64)]


MO_SEV_ERROR = 0
MO_ERR_BUDGET = 7
MO_ERR_CANCELLED = 8
MO_ERR_MODEL_NEEDED = 9
_CANCEL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class _Budget(ctypes.Structure):           # mo_budget
    _fields_ = [("max_ms", ctypes.c_uint64),
                ("cancelled", _CANCEL),
                ("arg", ctypes.c_void_p)]
_handle = ctypes.c_void_p


class MemoptError(Exception):
    """A hard error (mo_error): unknown preset, limits, memory, I/O."""

    def __init__(self, text, code=0):
        super().__init__(text)
        self.code = code


class InvalidConfig(MemoptError):
    """The config has errors; .result is the validate() dictionary."""

    def __init__(self, result):
        errs = result["errors"]
        first = errs[0] if errs else {"code": "?", "message": "", "line": 0, "column": 0}
        super().__init__("%d error(s); first: %s:%s: %s[%s]: %s" % (
            len(errs), first.get("line"), first.get("column"), "error",
            first.get("code"), first.get("message")), 5)
        self.result = result


class WorkLimit(MemoptError):
    """The call's time_limit ran out, or its cancel() asked it to stop
    (mo_budget; .code is MO_ERR_BUDGET at the deadline, MO_ERR_CANCELLED
    when cancelled)."""


class Unavailable(MemoptError):
    """The loaded libmemopt lacks this part of the API (an older build)."""


# ---- loading the library ---------------------------------------------------

def _candidates():
    env = os.environ.get("MEMOPT_LIB")
    if env:
        return [env]
    out = []
    local = os.path.join(os.getcwd(), "build", "libmemopt.so")
    if os.path.exists(local):
        out.append(local)
    found = ctypes.util.find_library("memopt")
    if found:
        out.append(found)
    out.append("libmemopt.so.0")
    return out


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("memopt: cannot load libmemopt (set MEMOPT_LIB): " + "; ".join(errors))


_lib, library_path = _load()


def _fn(name, restype, *argtypes, required=True):
    f = getattr(_lib, name, None)
    if f is None:
        if required:
            raise ImportError("memopt: %s lacks %s" % (library_path, name))
        return None
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_P = ctypes.POINTER
_diags_new = _fn("mo_diags_new", ctypes.c_int, _P(_handle))
_diags_free = _fn("mo_diags_free", None, _handle)
_diags_count = _fn("mo_diags_count", ctypes.c_size_t, _handle)
_diags_errors = _fn("mo_diags_errors", ctypes.c_size_t, _handle)
_diags_get = _fn("mo_diags_get", _P(_Diag), _handle, ctypes.c_size_t)
_diags_sort = _fn("mo_diags_sort", None, _handle)
_check = _fn("mo_check", ctypes.c_int, _P(_handle), _P(_handle), _handle, _P(_Input), _P(_Error))
_config_free = _fn("mo_config_free", None, _handle)
_model_free = _fn("mo_model_free", None, _handle)
_presets_count = _fn("mo_presets_count", ctypes.c_size_t)
_preset_name = _fn("mo_preset_name", ctypes.c_char_p, ctypes.c_size_t)
_preset_description = _fn("mo_preset_description", ctypes.c_char_p, ctypes.c_size_t)
_model_num_layers = _fn("mo_model_num_layers", ctypes.c_int64, _handle)
_model_layer_type_of = _fn("mo_model_layer_type_of", ctypes.c_size_t, _handle, ctypes.c_int64)
_model_layer_type_name = _fn("mo_model_layer_type_name", ctypes.c_char_p, _handle, ctypes.c_size_t)
_expand = _fn("mo_expand", ctypes.c_int, _P(_handle), _handle, _handle, _P(_Error))
_plan_free = _fn("mo_plan_free", None, _handle)
_plan_layer_count = _fn("mo_plan_layer_count", ctypes.c_size_t, _handle)
_plan_action_count = _fn("mo_plan_action_count", ctypes.c_size_t, _handle, ctypes.c_int64)
_plan_action = _fn("mo_plan_action", _P(_Action), _handle, ctypes.c_int64, ctypes.c_size_t)
_plan_prefetch = _fn("mo_plan_prefetch", ctypes.c_int64, _handle)
_action_name = _fn("mo_action_name", ctypes.c_char_p, ctypes.c_int)
# the estimator: present in newer builds only (an older libmemopt still loads)
_estimate_run = _fn("mo_estimate_run", ctypes.c_int, _P(_handle), _handle, _handle, _P(_Error),
                    required=False)
if _estimate_run is not None:
    _estimate_free = _fn("mo_estimate_free", None, _handle)
    _estimate_peak = _fn("mo_estimate_peak_bytes", ctypes.c_uint64, _handle)
    _estimate_reserved = _fn("mo_estimate_reserved_peak_bytes", ctypes.c_uint64, _handle)
    _estimate_capacity = _fn("mo_estimate_capacity_bytes", ctypes.c_uint64, _handle)
    _estimate_overhead = _fn("mo_estimate_overhead_percent", ctypes.c_double, _handle)
    _estimate_framework = _fn("mo_estimate_framework", ctypes.c_char_p, _handle)
    _estimate_stage_count = _fn("mo_estimate_stage_count", ctypes.c_size_t, _handle)
    _estimate_stage_get = _fn("mo_estimate_stage_get", _P(_EstStage), _handle, ctypes.c_size_t)
    _estimate_layer_count = _fn("mo_estimate_layer_count", ctypes.c_size_t, _handle)
    _estimate_layer_get = _fn("mo_estimate_layer_get", _P(_EstLayer), _handle, ctypes.c_int64)
    _estimate_bucket_name = _fn("mo_estimate_bucket_name", ctypes.c_char_p, ctypes.c_int)
    _estimate_get_time = _fn("mo_estimate_get_time", _P(_EstTime), _handle, required=False)
    _estimate_rules_note = _fn("mo_estimate_rules_note", ctypes.c_char_p, _handle,
                               required=False)
_model_assumed_count = _fn("mo_model_assumed_count", ctypes.c_size_t, _handle, required=False)
_model_assumed = _fn("mo_model_assumed", ctypes.c_int, _handle, ctypes.c_size_t,
                     _P(ctypes.c_char_p), _P(ctypes.c_char_p), _P(ctypes.c_char_p),
                     required=False)
# the work budget: newer builds only (an older libmemopt still loads)
_budget_begin = _fn("mo_budget_begin", None, _P(_Budget), required=False)
_budget_end = _fn("mo_budget_end", ctypes.c_int, required=False)
_migrate = _fn("mo_migrate", ctypes.c_int, _P(ctypes.c_void_p), _P(ctypes.c_size_t), _handle,
               _handle, _P(_Error), required=False)
_planner_run = _fn("mo_planner_run", ctypes.c_int, _P(_handle), ctypes.c_void_p, _P(_Error),
                   required=False)
if _planner_run is not None:
    _planner_free = _fn("mo_planner_result_free", None, _handle)
    _planner_fits = _fn("mo_planner_fits", ctypes.c_int, _handle)
    _planner_exact = _fn("mo_planner_exact", ctypes.c_int, _handle)
    _planner_budget = _fn("mo_planner_budget", ctypes.c_uint64, _handle)
    _planner_yaml = _fn("mo_planner_yaml", ctypes.c_char_p, _handle)
    _planner_estimate = _fn("mo_planner_estimate", _handle, _handle)
_parse_size = _fn("mo_parse_size", ctypes.c_int, _P(ctypes.c_uint64), ctypes.c_char_p)
_ledger_read = _fn("mo_ledger_read_buffer", ctypes.c_int, _P(_handle), ctypes.c_char_p,
                   ctypes.c_size_t, ctypes.c_void_p, _P(_Error), required=False)
if _ledger_read is not None:
    _ledger_free = _fn("mo_ledger_free", None, _handle)
    _ledger_json = _fn("mo_ledger_json", ctypes.c_void_p, _handle, _handle, ctypes.c_char_p)
    _ledger_compare = _fn("mo_ledger_compare_run", ctypes.c_int, _P(_handle), _handle, _handle,
                          ctypes.c_int64, _P(_Error))
    _ledger_compare_free = _fn("mo_ledger_compare_free", None, _handle)
# the C library's free(), for the char * the library hands over
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


class _PlannerInput(ctypes.Structure):     # mo_planner_input
    _fields_ = [("model", ctypes.c_void_p),
                ("budget", ctypes.c_uint64),
                ("start", ctypes.c_void_p),
                ("allow", ctypes.c_uint),
                ("no_staged", ctypes.c_int),
                ("max_prefetch", ctypes.c_int64)]


def _taken(ptr, length=None):
    """The text of a malloc'd char * the library handed over, freed."""
    if not ptr:
        raise MemoptError("out of memory", 1)
    try:
        return ctypes.string_at(ptr, length).decode("utf-8") if length is not None \
            else ctypes.string_at(ptr).decode("utf-8")
    finally:
        _libc.free(ptr)



def _s(b):
    return None if b is None else b.decode("utf-8", "replace")


def _b(text):
    if text is None:
        return None
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)


def _budget(time_limit, cancel):
    """A mo_budget for time_limit seconds and/or a cancel() callable, or
    None when neither is given. The callback object is kept on the
    structure so it lives as long as the call."""
    if time_limit is None and cancel is None:
        return None
    if _budget_begin is None:
        raise Unavailable("this libmemopt (%s) has no work budget (mo_budget_begin)" % library_path)
    b = _Budget()
    if time_limit is not None:
        if not time_limit > 0:
            raise ValueError("time_limit must be a positive number of seconds")
        b.max_ms = max(1, int(round(float(time_limit) * 1000)))
    if cancel is not None:
        if not callable(cancel):
            raise TypeError("cancel must be callable")
        b.cancelled = _CANCEL(lambda _arg: 1 if cancel() else 0)
    return b


def _run_budgeted(budget, fn, *args):
    """fn(*args) under budget on this thread (mo_budget is thread-local)."""
    if budget is None:
        return fn(*args)
    _budget_begin(ctypes.byref(budget))
    try:
        return fn(*args)
    finally:
        _budget_end()


def presets():
    """[{"name", "description"}] of the built-in models."""
    return [{"name": _s(_preset_name(i)), "description": _s(_preset_description(i))}
            for i in range(_presets_count())]


def has_estimator():
    return _estimate_run is not None


# ---- one checked input: config + model through mo_check --------------------

class _Checked:
    """Holds the handles of one mo_check call; frees them on close()."""

    def __init__(self, config_text, model=None, devices=None, name="config"):
        self.cfg, self.model, self.diags = _handle(), _handle(), _handle()
        self._keep = []
        if _diags_new(ctypes.byref(self.diags)) != 0:
            raise MemoptError("out of memory", 1)
        try:
            self._run(config_text, model, devices, name)
        except BaseException:
            self.close()
            raise

    def _run(self, config_text, model, devices, name):
        cfg = _b(config_text)
        if cfg is None:
            raise TypeError("config_text is required")
        inp = _Input(config=cfg, config_len=len(cfg), config_name=_b(name),
                     devices=int(devices or 0))
        if devices is not None and int(devices) < 1:
            raise ValueError("devices must be at least 1")
        if model is not None:
            names = {p["name"] for p in presets()}
            if isinstance(model, str) and model in names:
                inp.preset = _b(model)
            elif isinstance(model, str) and "\n" not in model and os.path.isfile(model):
                with open(model, "rb") as f:
                    text = f.read()
                inp.model, inp.model_len, inp.model_name = text, len(text), _b(model)
                inp.model_dir = _b(os.path.dirname(os.path.abspath(model)))
            elif isinstance(model, (bytes, bytearray)) or "\n" in model or model.lstrip()[:1] == "{":
                text = _b(model)
                inp.model, inp.model_len, inp.model_name = text, len(text), b"model"
            else:
                inp.preset = _b(model)  # the library reports the unknown preset
        err = _Error()
        if _check(ctypes.byref(self.cfg), ctypes.byref(self.model), self.diags,
                  ctypes.byref(inp), ctypes.byref(err)) != 0:
            raise MemoptError(_s(err.text), err.code)
        _diags_sort(self.diags)

    def result(self):
        errors, warnings = [], []
        for i in range(_diags_count(self.diags)):
            d = _diags_get(self.diags, i).contents
            item = {"code": _s(d.code), "message": _s(d.message), "line": d.line,
                    "column": d.column, "path": _s(d.path) or "", "file": _s(d.file)}
            if d.hint:
                item["hint"] = _s(d.hint)
            if d.layers:
                item["layers"] = _s(d.layers)
            (errors if d.severity == MO_SEV_ERROR else warnings).append(item)
        return {"valid": not errors, "errors": errors, "warnings": warnings}

    def close(self):
        _config_free(self.cfg)
        _model_free(self.model)
        _diags_free(self.diags)
        self.cfg = self.model = self.diags = _handle()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def validate(config_text, model=None, devices=None, name="config"):
    """Every rule against the model: {"valid", "errors", "warnings"}.

    model: a preset name, a model file's path, or model text (YAML/JSON); None
    takes the model the config carries (a PyNative training YAML), else the
    checks that need one report `model-needed`. devices: the device count for
    files that lack it. Raises MemoptError on hard errors (unknown preset,
    limits)."""
    with _Checked(config_text, model, devices, name) as c:
        return c.result()


def expand(config_text, model=None, devices=None, name="config"):
    """The expanded plan: {"layers": [{"layer", "type", "actions": [{"path",
    "action", "rule": {"section", "key", "line"}}]}], "prefetch", "warnings"}.
    Raises InvalidConfig (with .result) when the config has errors, and
    MemoptError when there is no model."""
    with _Checked(config_text, model, devices, name) as c:
        res = c.result()
        if not res["valid"]:
            raise InvalidConfig(res)
        if not c.model:
            raise MemoptError("expand needs a model: pass model=", 4)
        plan, err = _handle(), _Error()
        if _expand(ctypes.byref(plan), c.cfg, c.model, ctypes.byref(err)) != 0:
            raise MemoptError(_s(err.text), err.code)
        try:
            layers = []
            nl = _model_num_layers(c.model)
            for layer in range(_plan_layer_count(plan)):
                t = _model_layer_type_of(c.model, layer)
                acts = []
                for i in range(_plan_action_count(plan, layer)):
                    a = _plan_action(plan, layer, i).contents
                    acts.append({"path": _s(a.path), "action": _s(_action_name(a.action)),
                                 "rule": {"section": _s(a.rule.section), "key": _s(a.rule.key),
                                          "line": a.rule.line}})
                layers.append({"layer": layer, "type": _s(_model_layer_type_name(c.model, t)),
                               "mtp": layer >= nl, "actions": acts})
            return {"layers": layers, "prefetch": _plan_prefetch(plan),
                    "warnings": res["warnings"]}
        finally:
            _plan_free(plan)  # the plan borrows cfg and model: freed first


def estimate(config_text, model=None, devices=None, name="config", time_limit=None,
             cancel=None):
    """The memory estimate, per device: {"peak_bytes", "reserved_peak_bytes",
    "capacity_bytes", "framework", "overhead_percent", "stages": [{"stage",
    "peak_bytes", "reserved_peak_bytes", "peak_event", "weights_bytes",
    "gradients_bytes", "optimizer_bytes", "activations_bytes",
    "swap_buffer_bytes", "peak_by_bucket", "first_layer", "num_layers",
    "in_flight", "between_steps_bytes"}], "layers": [{"layer", "stage", "type", "activation_bytes",
    "baseline_activation_bytes", "recompute_flops", "swap_bytes",
    "recomputed_bytes"}], "time": {the step time and its breakdown:
    "step_seconds", "compute_seconds", ..., "fixed_seconds",
    "tokens_per_second_per_device", "mfu", "largest_term"}, "warnings"}
    (docs/api.md; "time" is None with a libmemopt that has no time model).
    Raises InvalidConfig when the
    config has errors, MemoptError when no estimate can be made (no model, an
    unknown device count: pass devices=), Unavailable when the loaded
    libmemopt has no estimator.

    time_limit: seconds the estimate may compute (None: no limit); cancel: a
    callable polled while it computes, true to stop. Either raises
    WorkLimit when it stops the work (a pipeline of thousands of stages can
    otherwise compute for minutes)."""
    if _estimate_run is None:
        raise Unavailable("this libmemopt (%s) has no estimator (mo_estimate_run)" % library_path)
    budget = _budget(time_limit, cancel)
    with _Checked(config_text, model, devices, name) as c:
        res = c.result()
        if not res["valid"]:
            raise InvalidConfig(res)
        if not c.model:
            raise MemoptError("estimate needs a model: pass model=", 4)
        est, err = _handle(), _Error()
        if _run_budgeted(budget, _estimate_run, ctypes.byref(est), c.cfg, c.model,
                         ctypes.byref(err)) != 0:
            raise (WorkLimit if err.code in (MO_ERR_BUDGET, MO_ERR_CANCELLED) else MemoptError)(_s(err.text),
                                                                            err.code)
        try:
            stages = []
            for i in range(_estimate_stage_count(est)):
                st = _estimate_stage_get(est, i).contents
                stages.append({
                    "stage": st.stage, "peak_bytes": st.peak_bytes,
                    "reserved_peak_bytes": st.reserved_peak_bytes,
                    "peak_event": _s(st.peak_event), "weights_bytes": st.weights_bytes,
                    "gradients_bytes": st.gradients_bytes,
                    "optimizer_bytes": st.optimizer_bytes,
                    "activations_bytes": st.activations_bytes,
                    "swap_buffer_bytes": st.swap_buffer_bytes,
                    "peak_by_bucket": {_s(_estimate_bucket_name(k)): st.peak_by_bucket[k]
                                       for k in range(MO_EST_BUCKETS)},
                    "first_layer": st.first_layer, "num_layers": st.num_layers,
                    "in_flight": st.in_flight,
                    "between_steps_bytes": st.between_steps_bytes})
            layers = []
            for i in range(_estimate_layer_count(est)):
                ly = _estimate_layer_get(est, i).contents
                layers.append({
                    "layer": ly.layer, "stage": ly.stage, "type": _s(ly.type),
                    "activation_bytes": ly.activation_bytes,
                    "baseline_activation_bytes": ly.baseline_activation_bytes,
                    "recompute_flops": ly.recompute_flops, "swap_bytes": ly.swap_bytes,
                    "recomputed_bytes": ly.recomputed_bytes})
            time = None
            if _estimate_get_time is not None:
                t = _estimate_get_time(est).contents
                time = {n: getattr(t, n) for n in _TIME_TERMS}
                time.update({"slowest_stage": t.slowest_stage,
                             "tokens_per_second_per_device": t.tokens_per_second_per_device,
                             "model_flops": t.model_flops, "mfu": t.mfu,
                             "largest_term": _s(t.largest_term)})
            framework = _s(_estimate_framework(est))
            note = _s(_estimate_rules_note(est)) if _estimate_rules_note else ""
            return {"peak_bytes": _estimate_peak(est),
                    "reserved_peak_bytes": _estimate_reserved(est),
                    "capacity_bytes": _estimate_capacity(est),
                    "framework": framework,
                    "overhead_percent": _estimate_overhead(est),
                    "stages": stages, "layers": layers, "time": time,
                    "accuracy": _accuracy(framework, note or ""),
                    "assumed": _assumed(c.model),
                    "warnings": res["warnings"]}
        finally:
            _estimate_free(est)


# ---- the trust signals: measured accuracy, assumed values ------------------

def _accuracy_tables():
    """Where the table of measured runs may be: $MEMOPT_ACCURACY, beside the
    source tree the library was built in (build/../api/accuracy.tsv), or
    where `make install` puts it (PREFIX/share/memopt/accuracy.tsv)."""
    env = os.environ.get("MEMOPT_ACCURACY")
    if env:
        return [env]
    here = os.path.dirname(os.path.realpath(library_path)) if os.sep in library_path else ""
    out = []
    if here:
        out += [os.path.join(here, "..", "api", "accuracy.tsv"),
                os.path.join(here, "..", "share", "memopt", "accuracy.tsv")]
    out += [os.path.join(p, "share", "memopt", "accuracy.tsv")
            for p in (sys.prefix, "/usr/local", "/usr")]
    return out


def _accuracy_rows(rules):
    for path in _accuracy_tables():
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        runs = []
        for line in lines:
            f = line.split("\t")
            if line.startswith("#") or f[0] != rules or len(f) != 7:
                continue
            runs.append({"run": f[1], "set": f[2], "measured_mib": float(f[3]),
                         "estimated_mib": float(f[4]), "error_percent": float(f[5]),
                         "source": f[6]})
        return runs, os.path.normpath(path)
    return [], None


def _accuracy(rules, note) -> Accuracy:
    """The measured runs of the rules in use, with their median and worst
    |error|: the figures `memopt estimate` and the API answer."""
    runs, table = _accuracy_rows(rules)
    out = {"rules": rules, "note": note, "runs": runs, "median_abs_error_percent": None,
           "max_abs_error_percent": None, "worst_run": None, "table": table}
    if runs:
        errs = sorted(abs(r["error_percent"]) for r in runs)
        n = len(errs)
        out["median_abs_error_percent"] = errs[n // 2] if n % 2 else (errs[n // 2 - 1] + errs[n // 2]) / 2
        out["max_abs_error_percent"] = errs[-1]
        out["worst_run"] = max(runs, key=lambda r: abs(r["error_percent"]))["run"]
    return out


def _assumed(model) -> List[Assumed]:
    if _model_assumed is None or not model:
        return []
    out = []
    for i in range(_model_assumed_count(model)):
        path, value, source = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        if _model_assumed(model, i, ctypes.byref(path), ctypes.byref(value),
                          ctypes.byref(source)) == 0:
            out.append({"path": _s(path.value), "value": _s(value.value),
                        "source": _s(source.value)})
    return out


# ---- sizing a job (memopt/size.h): newer builds only --------------------------

class _SizeInput(ctypes.Structure):        # mo_size_input
    _fields_ = [("model", _handle), ("devices", ctypes.c_int64),
                ("devices_max", ctypes.c_int64), ("global_batch", ctypes.c_int64),
                ("devices_per_node", ctypes.c_int64), ("budget", ctypes.c_uint64),
                ("headroom_percent", ctypes.c_double), ("top", ctypes.c_size_t),
                ("base", _handle)]


class _SizeRejection(ctypes.Structure):    # mo_size_rejection
    _fields_ = [("code", ctypes.c_int), ("code_name", ctypes.c_char_p),
                ("text", ctypes.c_char_p), ("n_params", ctypes.c_size_t),
                ("param_names", ctypes.c_char_p * 3), ("params", ctypes.c_int64 * 3),
                ("field", ctypes.c_char_p), ("count", ctypes.c_uint64)]


class _SizeLayout(ctypes.Structure):       # mo_size_layout
    _fields_ = [("devices", ctypes.c_int64), ("tensor_parallel", ctypes.c_int64),
                ("pipeline_parallel", ctypes.c_int64), ("virtual_pipeline", ctypes.c_int64),
                ("context_parallel", ctypes.c_int64), ("expert_parallel", ctypes.c_int64),
                ("expert_tensor_parallel", ctypes.c_int64), ("data_parallel", ctypes.c_int64),
                ("data_parallel_shard", ctypes.c_int64), ("sequence_parallel", ctypes.c_int),
                ("distributed_optimizer", ctypes.c_int), ("micro_batch_size", ctypes.c_int64),
                ("micro_batch_num", ctypes.c_int64), ("peak_bytes", ctypes.c_uint64),
                ("budget_bytes", ctypes.c_uint64), ("step_seconds", ctypes.c_double),
                ("tokens_per_second_per_device", ctypes.c_double), ("fits", ctypes.c_int),
                ("pareto", ctypes.c_int), ("plan", ctypes.c_char_p),
                ("config_yaml", ctypes.c_char_p), ("model_yaml", ctypes.c_char_p),
                ("megatron_args", ctypes.c_char_p), ("mfu", ctypes.c_double),
                ("megatron_plan_note", ctypes.c_char_p)]


_size_run = _fn("mo_size_run", ctypes.c_int, _P(_handle), _P(_SizeInput), _P(_Error),
                required=False)
if _size_run is not None:
    _size_free = _fn("mo_size_result_free", None, _handle)
    _size_count = _fn("mo_size_count", ctypes.c_size_t, _handle)
    _size_get = _fn("mo_size_get", _P(_SizeLayout), _handle, ctypes.c_size_t)
    _size_rej_count = _fn("mo_size_rejected_count", ctypes.c_size_t, _handle)
    _size_rej_at = _fn("mo_size_rejected_at", _P(_SizeRejection), _handle, ctypes.c_size_t)
    _size_accepted = _fn("mo_size_accepted", ctypes.c_uint64, _handle)
    _size_estimated = _fn("mo_size_estimated", ctypes.c_uint64, _handle)
    _size_planned = _fn("mo_size_planned", ctypes.c_uint64, _handle)
    _size_complete = _fn("mo_size_complete", ctypes.c_int, _handle)
    _size_smallest = _fn("mo_size_smallest_devices", ctypes.c_int64, _handle)


def _size_layout(l) -> SizeLayout:
    par = {"world_size": l.devices, "data_parallel": l.data_parallel,
           "data_parallel_shard": l.data_parallel_shard, "tensor_parallel": l.tensor_parallel,
           "pipeline_parallel": l.pipeline_parallel, "virtual_pipeline": l.virtual_pipeline,
           "expert_parallel": l.expert_parallel}
    if l.expert_tensor_parallel > 0:
        par["expert_tensor_parallel"] = l.expert_tensor_parallel
    par.update({"context_parallel": l.context_parallel,
                "sequence_parallel": bool(l.sequence_parallel),
                "distributed_optimizer": bool(l.distributed_optimizer)})
    out = {"parallel": par,
           "training": {"micro_batch_size": l.micro_batch_size,
                        "micro_batch_num": l.micro_batch_num},
           "peak_bytes": l.peak_bytes, "budget_bytes": l.budget_bytes,
           "step_seconds": l.step_seconds,
           "tokens_per_second_per_device": l.tokens_per_second_per_device,
           "mfu": l.mfu, "fits": bool(l.fits), "pareto": bool(l.pareto), "plan": _s(l.plan),
           "config": _s(l.config_yaml), "model": _s(l.model_yaml)}
    if l.megatron_args:
        out["megatron_args"] = _s(l.megatron_args)
    if l.megatron_plan_note:
        out["megatron_plan_note"] = _s(l.megatron_plan_note)
    return out


def _size_checked(model, base, devices):
    """The model (with base, the base's config too) as the files state it;
    when that has errors (a file without a device count), again on the
    question's device count: the search replaces the layout either way."""
    text, name = (base, "base") if base is not None else ("recompute:\n  mode: None\n", "<none>")
    c = _Checked(text, model, None, name)
    if c.result()["valid"] and c.model:
        return c
    c.close()
    c = _Checked(text, model, devices, name)
    res = c.result()
    if not res["valid"] or not c.model:
        c.close()
        raise InvalidConfig(res)
    return c


def _size_result(r) -> SizeResult:
    rejected, rejections = {}, []
    for i in range(_size_rej_count(r)):
        p = _size_rej_at(r, i)
        if not p:
            continue
        g = p.contents
        one = {"code": _s(g.code_name), "reason": _s(g.text),
               "params": {_s(g.param_names[k]): g.params[k] for k in range(min(g.n_params, 3))}}
        if g.field:
            one["field"] = _s(g.field)
        one["count"] = g.count
        rejected[one["reason"]] = g.count
        rejections.append(one)
    smallest = _size_smallest(r)
    return {"layouts": [_size_layout(_size_get(r, i).contents) for i in range(_size_count(r))],
            "rejected": rejected, "rejections": rejections, "accepted": _size_accepted(r),
            "estimated": _size_estimated(r), "planned": _size_planned(r),
            "complete": bool(_size_complete(r)),
            "smallest_devices": smallest if smallest > 0 else None}


def size(model: Model, devices: Union[int, Tuple[int, int]], global_batch: int,
         devices_per_node: Optional[int] = None, budget: Optional[int] = None,
         headroom: Optional[float] = None, top: Union[int, str] = 10,
         time_limit: Optional[float] = None, cancel=None,
         base: Union[str, bytes, None] = None) -> SizeResult:
    """The fastest parallel layouts, each with the cheapest plan that fits:
    the shape of `memopt size --json` ({"layouts": [...], "rejected":
    {reason: count}, "rejections": [{"code", "reason", "params", "count"}], "accepted", "estimated", "planned", "complete",
    "smallest_devices"}). devices: a count or a (low, high) range; budget:
    bytes per device (None: the capacity less headroom percent); top: a
    count or "all". base: a MindSpore Transformers training YAML's text
    (model None: its own model): each layout's "config" is then that file
    with the layout and its plan written in, every other byte kept.
    time_limit / cancel as for estimate(): the search then stops with the
    best layouts so far ("complete": False). Raises InvalidConfig when the
    model or base has errors, MemoptError when the question is refused."""
    if _size_run is None:
        raise Unavailable("this libmemopt (%s) has no layout search (mo_size_run)" % library_path)
    if model is None and base is None:
        raise TypeError("size() needs a model or a base")
    lo, hi = (devices if isinstance(devices, (tuple, list)) else (devices, 0))
    inp = _SizeInput(devices=int(lo), devices_max=int(hi), global_batch=int(global_batch),
                     devices_per_node=int(devices_per_node or 0), budget=int(budget or 0),
                     headroom_percent=float(headroom or 0),
                     top=(2**64 - 1 if top == "all" else int(top)))
    if int(lo) < 1:
        raise MemoptError("devices must be 1 to 1048576 (a range low-high)", 2)
    bud = _budget(time_limit, cancel)
    with _size_checked(model, base, int(lo)) as c:
        inp.model = c.model
        inp.base = c.cfg if base is not None else None
        r, err = _handle(), _Error()
        if _run_budgeted(bud, _size_run, ctypes.byref(r), ctypes.byref(inp),
                         ctypes.byref(err)) != 0:
            raise MemoptError(_s(err.text), err.code)
        try:
            return _size_result(r)
        finally:
            _size_free(r)


# ---- migrate, plan, ledger ----------------------------------------------------


def migrate(config_text: Union[str, bytes], name: str = "config") -> MigrateResult:
    """A graph-mode training YAML with its top-level recompute_config written
    as the recompute / recompute_comm sections that mean the same plan, every
    other byte kept (`memopt migrate`). warnings lists what had no
    equivalent (code no-equivalent). Raises InvalidConfig when the file has
    errors, MemoptError (with the reason) when there is nothing to migrate."""
    if _migrate is None:
        raise Unavailable("this libmemopt (%s) has no mo_migrate" % library_path)
    with _Checked(config_text, None, None, name) as c:
        res = c.result()
        if not res["valid"]:
            raise InvalidConfig(res)
        out, n, err = ctypes.c_void_p(), ctypes.c_size_t(), _Error()
        if _migrate(ctypes.byref(out), ctypes.byref(n), c.diags, c.cfg, ctypes.byref(err)) != 0:
            raise MemoptError(_s(err.text), err.code)
        text = _taken(out.value, n.value)
        _diags_sort(c.diags)
        return {"yaml": text, "warnings": c.result()["warnings"]}


def parse_size(text: Union[str, int]) -> int:
    """Bytes of a size such as "58GiB", "64GB" or 1024 (as the CLI reads them)."""
    return _budget_bytes(text)


def _budget_bytes(budget):
    if budget is None:
        return 0
    if isinstance(budget, int):
        if budget <= 0:
            raise ValueError("budget must be a positive byte count")
        return budget
    v = ctypes.c_uint64()
    if _parse_size(ctypes.byref(v), _b(str(budget))) != 0 or v.value == 0:
        raise ValueError("budget must be bytes or a size such as '58GiB': %r" % (budget,))
    return v.value


def plan(config_text: Union[str, bytes], model: Model = None, budget: Union[int, str, None] = None,
         devices: Optional[int] = None, name: str = "config") -> PlanResult:
    """The cheapest plan that fits `budget` per device (bytes, or a size
    such as "58GiB"; None: the device's capacity), keeping what the config
    already recomputes or swaps (`memopt plan`). config: the plan as the
    three sections. Raises InvalidConfig, MemoptError (no model)."""
    if _planner_run is None:
        raise Unavailable("this libmemopt (%s) has no planner (mo_planner_run)" % library_path)
    want = _budget_bytes(budget)
    with _Checked(config_text, model, devices, name) as c:
        res = c.result()
        if not res["valid"]:
            raise InvalidConfig(res)
        if not c.model:
            raise MemoptError("plan needs a model: pass model=", 4)
        inp = _PlannerInput(model=c.model.value, budget=want, start=c.cfg.value)
        r, err = _handle(), _Error()
        if _planner_run(ctypes.byref(r), ctypes.byref(inp), ctypes.byref(err)) != 0:
            raise MemoptError(_s(err.text), err.code)
        try:
            e = _planner_estimate(r)
            return {"fits": bool(_planner_fits(r)), "exact": bool(_planner_exact(r)),
                    "budget_bytes": _planner_budget(r), "peak_bytes": _estimate_peak(e),
                    "overhead_percent": _estimate_overhead(e), "config": _s(_planner_yaml(r)),
                    "warnings": res["warnings"]}
        finally:
            _planner_free(r)


def ledger(trace: Union[str, bytes], config_text: Union[str, bytes, None] = None,
           model: Model = None, stage: Optional[int] = None, devices: Optional[int] = None,
           name: str = "trace") -> Dict[str, Any]:
    """A measured memory trace (a MindSpore memory-tracker CSV or a memopt
    trace, JSON lines) read as `memopt ledger --json` reads it: its peak,
    what is alive there, its steps; with config_text and model, compared
    with their estimate on `stage` (None: the busiest) under "compare".
    Raises MemoptError with the line and column of a malformed trace."""
    if _ledger_read is None:
        raise Unavailable("this libmemopt (%s) has no ledger reader" % library_path)
    data = _b(trace)
    led, err = _handle(), _Error()
    if _ledger_read(ctypes.byref(led), data, len(data), None, ctypes.byref(err)) != 0:
        where = " (line %d, column %d)" % (err.line, err.column) if err.line else ""
        raise MemoptError(_s(err.text) + where, err.code)
    est, cmp_ = _handle(), _handle()
    try:
        if config_text is not None:
            with _Checked(config_text, model, devices, "config") as c:
                res = c.result()
                if not res["valid"]:
                    raise InvalidConfig(res)
                if not c.model:
                    raise MemoptError("the comparison needs a model: pass model=", 4)
                if _estimate_run(ctypes.byref(est), c.cfg, c.model, ctypes.byref(err)) != 0:
                    raise MemoptError(_s(err.text), err.code)
                if _ledger_compare(ctypes.byref(cmp_), led, est,
                                   -1 if stage is None else int(stage), ctypes.byref(err)) != 0:
                    raise MemoptError(_s(err.text), err.code)
        return json.loads(_taken(_ledger_json(led, cmp_, _b(name))))
    finally:
        _ledger_compare_free(cmp_)
        if est:
            _estimate_free(est)
        _ledger_free(led)
