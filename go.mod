module archivekit

go 1.25

require (
	github.com/alecthomas/kong v1.17.0
	github.com/chromedp/chromedp v0.13.6
	github.com/davidbyttow/govips/v2 v2.16.0
	github.com/lmittmann/tint v1.2.1
	github.com/pemistahl/lingua-go v1.4.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/image v0.18.0
	golang.org/x/sync v0.7.0
	golang.org/x/term v0.20.0
)

require (
	github.com/chromedp/cdproto v0.0.0-20250403032234-65de8f5d025b // indirect
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	github.com/shopspring/decimal v1.3.1 // indirect
	golang.org/x/exp v0.0.0-20221106115401-f9659909a136 // indirect
	golang.org/x/net v0.25.0
	golang.org/x/sys v0.29.0
	golang.org/x/text v0.16.0
	google.golang.org/protobuf v1.31.0 // indirect
)
