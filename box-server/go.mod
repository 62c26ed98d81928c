module edgegym/box-server

go 1.19
