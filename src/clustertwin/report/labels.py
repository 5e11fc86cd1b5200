"""One naming table: the words and unit a person reads for every plan JSON key and every figure
series. The terminal report, plan.html, compare.html, sweep.html and the web app all look names
up here, so no page shows a code name such as ``dp_exposed_s`` or ``run_cost_owned_usd``.

Pure data and string functions (no imports from the stages), so any layer may use it.

- :func:`label` -> ``"Step time"``; :func:`unit` -> ``"s"``; :func:`label_unit` ->
  ``"Step time (s)"``. Keys are dotted plan JSON keys (``training.step_time_s``) or, for a
  figure series, the series' own key (``dp_exposed_s``, ``weights_grads_optimizer``).
- A key not in the table gets a readable fallback (:func:`humanize`): its unit suffix becomes
  the unit and its underscores and hyphens become spaces.
"""

from __future__ import annotations

import re

#: unit suffixes of the contract (architecture habit 3: units in names) -> the unit shown
SUFFIX_UNITS: tuple[tuple[str, str], ...] = (
    ("_usd_per_gpu_hour", "$/GPU-h"), ("_usd_per_month", "$/month"), ("_usd_per_kwh", "$/kWh"),
    ("_gib_per_gpu", "GiB/GPU"), ("_per_gpu", "per GPU"), ("_per_s", "/s"),
    ("_usd", "$"), ("_days", "days"), ("_min", "min"), ("_h", "h"), ("_s", "s"), ("_gib", "GiB"),
    ("_gb", "GB"), ("_tb", "TB"), ("_pb", "PB"), ("_gbps", "GB/s"), ("_kw", "kW"), ("_mw", "MW"),
    ("_m2", "m²"), ("_m", "m"), ("_frac", "fraction"),
)

#: dotted plan JSON key -> (label, unit). Units: "" for a count or ratio without one.
KEYS: dict[str, tuple[str, str]] = {
    # training
    "training.gpus": ("GPUs used by the run", ""),
    "training.installed_gpus": ("GPUs installed", ""),
    "training.idle_gpus": ("GPUs left idle", ""),
    "training.parallelism": ("Parallelism", ""),
    "training.step_time_s": ("Step time", "s"),
    "training.tokens_per_s": ("Throughput", "tokens/s"),
    "training.model_tflops_per_gpu": ("Model TFLOP/s per GPU", "TFLOP/s"),
    "training.mfu": ("Model FLOPs utilisation (MFU)", "%"),
    "training.hfu": ("Hardware FLOPs utilisation (HFU)", "%"),
    "training.memory_gib_per_gpu": ("Peak memory per GPU", "GiB"),
    "training.days": ("Training days without failures", "days"),
    "training.days_low": ("Training days, low end of the band", "days"),
    "training.days_high": ("Training days, high end of the band", "days"),
    "training.global_batch_seqs": ("Global batch", "sequences"),
    "training.stack": ("Software stack", ""),
    "training.peak_tflops_per_gpu": ("Dense peak per GPU", "TFLOP/s"),
    "training.params_total": ("Parameters", ""),
    "training.params_active": ("Active parameters per token", ""),
    # design
    "design.nodes": ("Nodes", ""), "design.racks": ("Racks", ""), "design.gpus": ("GPUs installed", ""),
    "design.scalable_units": ("Scalable units", ""),
    "design.fabric.tiers": ("Fabric tiers", ""),
    "design.fabric.leaf": ("Leaf switches", ""), "design.fabric.spine": ("Spine switches", ""),
    "design.fabric.core": ("Core switches", ""), "design.fabric.switches": ("Fabric switches", ""),
    "design.fabric.cables": ("Fabric cables", ""),
    "design.fabric.transceivers": ("Transceivers", ""),
    "design.power.it_kw": ("IT power", "kW"),
    "design.power.it_typical_kw": ("Typical IT power", "kW"),
    "design.power.facility_kw": ("Facility power", "kW"),
    "design.power.rack_kw": ("Power per compute rack", "kW"),
    "design.power.pue": ("PUE", ""),
    "design.cooling.mode": ("Cooling", ""),
    "design.storage.capacity_pb": ("Storage capacity", "PB"),
    "design.storage.write_gbps": ("Storage write bandwidth", "GB/s"),
    "design.storage.read_gbps": ("Storage read bandwidth", "GB/s"),
    "design.floor.area_m2": ("Floor area", "m²"),
    # reliability
    "reliability.interruptions_mean": ("Interruptions (mean)", ""),
    "reliability.interruptions_p5": ("Interruptions (5th percentile)", ""),
    "reliability.interruptions_p95": ("Interruptions (95th percentile)", ""),
    "reliability.mtbf_h": ("Job mean time between interruptions", "h"),
    "reliability.checkpoint_interval_min": ("Checkpoint interval", "min"),
    "reliability.optimal_interval_min": ("Optimal checkpoint interval", "min"),
    "reliability.young_interval_min": ("Young interval", "min"),
    "reliability.daly_interval_min": ("Daly interval", "min"),
    "reliability.ettr_mean": ("Effective training time ratio (ETTR)", "%"),
    "reliability.ettr_p5": ("ETTR (5th percentile)", "%"),
    "reliability.effective_days": ("Wall-clock days", "days"),
    "reliability.effective_days_p95": ("Wall-clock days (95th percentile)", "days"),
    "reliability.lost_gpu_hours": ("GPU-hours lost to failures", "GPU-h"),
    "reliability.by_cause": ("Interruptions by cause", ""),
    "reliability.wasted_usd": ("Cost of lost GPU-hours", "$"),
    # economics
    "economics.capex_usd": ("Capital cost", "$"),
    "economics.opex_usd_per_month": ("Operating cost", "$/month"),
    "economics.owned_usd_per_gpu_hour": ("Owned cost per GPU-hour", "$/GPU-h"),
    "economics.run_cost_owned_usd": ("Run cost, owned cluster", "$"),
    "economics.run_cost_cloud_usd": ("Run cost, cloud", "$"),
    "economics.run_cost_cloud_ideal_usd": ("Run cost, cloud without failures", "$"),
    "economics.wasted_compute_frac": ("Compute wasted on failures", "%"),
    # build-out
    "buildout.go_live_days_p50": ("Days to go-live (median)", "days"),
    "buildout.go_live_days_p90": ("Days to go-live (90% confidence)", "days"),
    "buildout.go_live_date_p50": ("Go-live date (median)", ""),
    "buildout.go_live_date_p90": ("Go-live date (90% confidence)", ""),
    "buildout.critical_path": ("Critical path", ""),
    "buildout.start_date": ("Build-out start", ""),
    "buildout.waves": ("Capacity waves", ""),
    # decision (contract section 5)
    "decision.best": ("Best option", ""),
    "decision.options": ("Options", ""),
    "decision.options.mode": ("Route", ""),
    "decision.options.gpus": ("GPUs", ""),
    "decision.options.ready_date": ("Cluster ready", ""),
    "decision.options.start_date": ("Training starts", ""),
    "decision.options.trained_by_p50": ("Trained by (median)", ""),
    "decision.options.trained_by_p90": ("Trained by (90% confidence)", ""),
    "decision.options.cost_usd": ("Cost", "$"),
    "decision.options.npv_usd": ("Net present cost", "$"),
    "decision.options.cash_peak_usd": ("Peak cash out", "$"),
    "decision.options.meets_target": ("Meets the target date", ""),
    "decision.options.cost_usage_usd": ("Cost, usage basis", "$"),
    "decision.options.cost_exit_usd": ("Cost, exit basis", "$"),
    "decision.options.usd_per_gpu_hour": ("Cost per GPU-hour", "$/GPU-h"),
    "decision.options.wall_clock_days_p50": ("Wall-clock days", "days"),
    "decision.options.mfu": ("MFU", "%"),
    "decision.options.p_best": ("Chance it is the best route", "%"),
    "decision.options.p_meets_target": ("Chance it meets the target", "%"),
    "decision.margin_usd": ("Margin to the runner-up", "$"),
    "warnings": ("Warnings", ""),
    # scenario keys that sweeps and the web app's inputs name (contract section 1)
    "model.preset": ("Model", ""),
    "cluster.gpus": ("GPUs installed", ""), "cluster.gpu": ("GPU", ""), "cluster.node": ("Node", ""),
    "cluster.spare_nodes": ("Spare nodes", ""), "cluster.deadline_days": ("Deadline", "days"),
    "cluster.fabric.technology": ("Fabric technology", ""),
    "cluster.fabric.oversubscription": ("Fabric oversubscription", ""),
    "training.tokens": ("Training tokens", ""), "training.seq_len": ("Sequence length", "tokens"),
    "training.global_batch_tokens": ("Global batch", "tokens"),
    "training.precision": ("Precision", ""),
    "training.parallelism.tp": ("Tensor parallel", ""), "training.parallelism.pp": ("Pipeline parallel", ""),
    "training.parallelism.dp": ("Data parallel", ""),
    "training.parallelism.micro_batch": ("Micro-batch", "sequences"),
    "reliability.failures_per_1000_node_days": ("Failures per 1000 node-days", ""),
    "reliability.restart_min": ("Restart time", "min"),
    "reliability.checkpoint_blocking_s": ("Checkpoint stall", "s"),
    "economics.cloud_usd_per_gpu_hour": ("Cloud price per GPU-hour", "$/GPU-h"),
    "economics.electricity_usd_per_kwh": ("Electricity price", "$/kWh"),
    "economics.pue": ("PUE", ""), "economics.depreciation_years": ("Depreciation", "years"),
    "buildout.profile": ("Build-out profile", ""),
    # clustertwin track (contract section 6)
    "progress.tokens_done": ("Tokens trained", "tokens"), "progress.fraction": ("Share of the run done", "%"),
    "observed.tokens_per_s": ("Observed throughput", "tokens/s"), "observed.step_s": ("Observed step time", "s"),
    "observed.mfu": ("Observed MFU", "%"), "observed.interruptions": ("Interruptions so far", ""),
    "observed.lost_days": ("Days lost to interruptions", "days"), "observed.ettr": ("Observed ETTR", ""),
    "forecast.trained_by_p10": ("Trained by (10% confidence)", ""),
    "forecast.trained_by_p50": ("Trained by (median)", ""),
    "forecast.trained_by_p90": ("Trained by (90% confidence)", ""),
    "forecast.remaining_days_p50": ("Days to go (median)", "days"),
    "forecast.remaining_days_p90": ("Days to go (90% confidence)", "days"),
    "forecast.checkpoint_interval_min": ("Checkpoint interval to use now", "min"),
}

#: figure series and breakdown keys (the keys of the dicts the stages return) -> (label, unit)
SERIES: dict[str, tuple[str, str]] = {
    # training.time_breakdown_s
    "step_s": ("Whole step", "s"), "compute_s": ("Compute", "s"),
    "bubble_s": ("Pipeline bubble", "s"), "tp_comm_s": ("Tensor-parallel communication", "s"),
    "cp_comm_s": ("Context-parallel communication", "s"),
    "ep_comm_s": ("Expert-parallel communication", "s"),
    "pp_comm_s": ("Pipeline communication", "s"),
    "dp_exposed_s": ("Data-parallel sync (not overlapped)", "s"),
    "zero3_exposed_s": ("ZeRO-3 gathers (not overlapped)", "s"),
    "optimizer_s": ("Optimizer step", "s"),
    # training.memory_breakdown_gib
    "weights_grads_optimizer": ("Weights, gradients and optimizer state", "GiB"),
    "activations": ("Activations", "GiB"), "reserve": ("Framework reserve", "GiB"),
    # reliability.lost_gpu_hours_by_category
    "checkpoint_stalls": ("Checkpoint stalls", "GPU-h"), "lost_progress": ("Lost progress", "GPU-h"),
    "restart": ("Restarts", "GPU-h"), "waiting_for_repair": ("Waiting for repair", "GPU-h"),
    # economics categories
    "compute": ("Compute", "$"), "network": ("Network", "$"), "storage": ("Storage", "$"),
    "power": ("Power", "$"), "cooling": ("Cooling", "$"), "facility": ("Facility", "$"),
    "integration": ("Integration", "$"), "other": ("Other", "$"), "energy": ("Energy", "$"),
    "staff": ("Staff", "$"), "maintenance": ("Maintenance", "$"),
    # decision routes
    "build": ("Build", ""), "colo": ("Colocation", ""), "lease": ("Lease", ""), "cloud": ("Cloud", ""),
}

#: a visible label that looks like a code name: snake_case, or a word ending in a unit suffix
CODE_NAME_RE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b|\b\w+_(?:s|usd|kw|mw|gib|gb|h|min|days|pb)\b")


def _split_suffix(name: str) -> tuple[str, str]:
    for suffix, shown in SUFFIX_UNITS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], shown
    return name, ""


def humanize(key: str) -> str:
    """A readable label for a key not in the table: the last dotted part, its unit suffix
    removed, ``_`` and ``-`` as spaces, known acronyms in capitals, first letter capital
    (``gpu-hbm3-memory`` -> ``GPU HBM3 memory``)."""
    last = key.rsplit(".", 1)[-1]
    stem, _ = _split_suffix(last)
    words = re.split(r"[_\-\s]+", stem.strip("_- "))
    acronyms = {"gpu", "cpu", "nic", "ssd", "hbm", "hbm3", "nccl", "ups", "pdu", "sram", "io", "it",
                "pue", "mfu", "hfu", "ettr", "bom", "su", "oob", "ufm", "nvme", "dp", "tp", "pp",
                "cp", "ep", "kw", "mw"}
    out = [w.upper() if w.lower() in acronyms else w for w in words if w]
    text = " ".join(out) or key
    return text[0].upper() + text[1:]


def _entry(key: str) -> tuple[str, str] | None:
    key = key.removeprefix("scenario.")  # a sweep column of the scenario (plan JSON `scenario`)
    if key in KEYS:
        return KEYS[key]
    if key in SERIES:
        return SERIES[key]
    generic = re.sub(r"\.\d+(?=\.|$)", "", key)  # decision.options.0.mode -> decision.options.mode
    return KEYS.get(generic)


def label(key: str) -> str:
    """The words a person reads for ``key`` (a dotted plan JSON key or a series key)."""
    hit = _entry(key)
    return hit[0] if hit else humanize(key)


def unit(key: str) -> str:
    """The unit of ``key``: from the table, else from its suffix (``""`` when it has none)."""
    hit = _entry(key)
    if hit:
        return hit[1]
    return _split_suffix(key.rsplit(".", 1)[-1])[1]


def label_unit(key: str) -> str:
    """``"Step time (s)"``; just the label when the key has no unit, its unit is ``%`` or the
    label already says it (``"Wall-clock days"``, not ``"Wall-clock days (days)"``)."""
    u, text = unit(key), label(key)
    said = u.lower() in re.split(r"[\s,()-]+", text.lower())
    return f"{text} ({u})" if u and u != "%" and not said else text


def looks_like_code_name(text: str) -> bool:
    """Whether ``text`` contains a code name (snake_case or a unit-suffixed word)."""
    return CODE_NAME_RE.search(text) is not None
