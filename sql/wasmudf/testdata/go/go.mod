module example.com/weirudf

go 1.24
