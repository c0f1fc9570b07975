"""Baseline methods the papers compare against (one module per family).

- :mod:`pathlib_core.baselines.tsvm`: supervised SVM, S3VM-light-style annealing TSVM and
  CCCP-TSVM (the peers of the S3VM path, Ogawa et al. 2013).
"""

from .tsvm import TSVMResult, annealing_tsvm, cccp_tsvm, supervised_svm

__all__ = ["TSVMResult", "annealing_tsvm", "cccp_tsvm", "supervised_svm"]
