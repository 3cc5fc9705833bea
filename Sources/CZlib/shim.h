// The system zlib (zlib1g-dev), used only to read the gzip-compressed data files of Places.
#include <zlib.h>
