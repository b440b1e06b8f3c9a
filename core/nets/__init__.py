"""Layer tables of CNNs, shared by every engine that maps networks (bounds, f-CNNx, MERIT, Cappuccino)."""
