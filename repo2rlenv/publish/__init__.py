"""Publishing mined tasks: Hub and Harbor registry datasets, portable images."""
