"""Communication lower bound of convolution layers and the dataflow that meets it (Chen et al., HPCA 2020)."""
