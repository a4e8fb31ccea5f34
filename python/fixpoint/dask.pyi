import os
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

from . import EvalResult

def evaluate(sessions: Mapping[str, Union[str, os.PathLike]], samples: Sequence[Any], metric: Any, client: Any, *,
             batch: int = 1, chunk: int = 16, reference: Optional[str] = None, threads: int = 1, show: bool = True,
             top: int = 5) -> EvalResult: ...

from . import CalibrationStats

def calibrate(model: Union[str, os.PathLike], shards: Sequence[Any], client: Any, **options: Any) -> CalibrationStats: ...
