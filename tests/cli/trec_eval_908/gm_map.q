gm_map                	all	0.1051
