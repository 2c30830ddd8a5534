module archivekit

go 1.22
