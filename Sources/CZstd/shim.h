// The system's zstd, as the Swift module CZstd. Nothing else belongs here.
#include <zstd.h>
