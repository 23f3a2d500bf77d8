module github.com/informerkit/informerkit/e2e

go 1.26.0

replace github.com/informerkit/informerkit => ../

require github.com/informerkit/informerkit v0.0.0-00010101000000-000000000000

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/time v0.16.0 // indirect
)
