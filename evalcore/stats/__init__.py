"""Pure statistics: association (phi, conditioned rates, intervals), agreement (kappa, alpha),
correlation and paired tests, scores against people and reliability (ICC, alpha), prediction-powered estimates of a pass
rate from a few labels and the judge (PPI++, active and prefix sampling). Numbers in, numbers out: no files, no evalcore imports but errors.
"""

from .association import MIN_CELL_FAILURES, MIN_PEOPLE, phi_bound, phi_interval, phi_intervals_paired

__all__ = ["MIN_CELL_FAILURES", "MIN_PEOPLE", "phi_bound", "phi_interval", "phi_intervals_paired"]
