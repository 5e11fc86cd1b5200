"""``clustertwin track``: a twin that follows the real run.

Reads what a training job writes (Megatron-LM / NeMo iteration lines, torchtitan step lines,
Hugging Face Trainer logs, a plain CSV) and the job's Slurm accounting, then compares the run
with its plan, forecasts the finish with an interruption rate learnt from what was seen, and
flags drift. Modules:

- :mod:`.records`: one metric record and the bad-line counter every reader shares;
- :mod:`.readers` (Megatron, torchtitan, CSV), :mod:`.hf` (HF Trainer), :mod:`.detect`
  (which reader a file needs, by content);
- :mod:`.stream`: the bounded-memory accumulator a run's records stream through;
- :mod:`.slurm`: the job's allocations from ``sacct --parsable2``;
- :mod:`.planview`, :mod:`.observe`, :mod:`.forecast`, :mod:`.drift`: the analysis;
- :mod:`.synthetic`: runs generated from the twin's own step-time and failure models;
- :mod:`.report`: the JSON document, terminal rows, track.html and the measured file.
"""
