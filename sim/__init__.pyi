"""The public names of ``sim``, each declared once (read by type checkers and by
``retcon.lazy.attach_stub`` at run time; the package docstring is in ``__init__.py``)."""

from . import kernel as kernel
from ._crossover import SimulatedCrossover as SimulatedCrossover
from ._crossover import bootstrap_crossover as bootstrap_crossover
from ._crossover import simulated_crossover as simulated_crossover
from ._instances import Instances as Instances
from ._instances import simulate_instances as simulate_instances
from ._scenario import DEFAULT_PRESET as DEFAULT_PRESET
from ._scenario import PRESETS as PRESETS
from ._scenario import ClassifierConfig as ClassifierConfig
from ._scenario import LengthConfig as LengthConfig
from ._scenario import OperatorConfig as OperatorConfig
from ._scenario import QueryTypeConfig as QueryTypeConfig
from ._scenario import RetrieverConfig as RetrieverConfig
from ._scenario import Scenario as Scenario
from ._scenario import load_scenario as load_scenario
from ._scenario import scenario_from_dict as scenario_from_dict
from ._simulate import QueryArrays as QueryArrays
from ._simulate import SimResult as SimResult
from ._simulate import block_se as block_se
from ._simulate import exact_mean as exact_mean
from ._simulate import simulate as simulate
from ._simulate import simulate_queries as simulate_queries
from ._stress import SpilloverSummary as SpilloverSummary
from ._stress import StressResult as StressResult
from ._stress import spillover_summary as spillover_summary
from ._stress import stress as stress
