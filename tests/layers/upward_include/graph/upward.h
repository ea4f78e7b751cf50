// A graph file that includes a report header: the layer check must refuse it.
#include "report/text_table.h"
