#include "clv2.h"
