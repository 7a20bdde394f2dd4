"""Every method under every protocol: the methods a config lists -- built-in ones and those of other
packages -- run under the grids of the studies that offer their protocol, beside each other, and
are ranked per protocol and budget (:mod:`.analysis`)."""
