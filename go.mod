module github.com/fencekit/fence

go 1.26
