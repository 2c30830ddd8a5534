module archivekit

go 1.22.0

require github.com/lmittmann/tint v1.2.1
