module github.com/getratchet/ratchet

go 1.26.8
