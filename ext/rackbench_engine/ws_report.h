/*
 * ws_report.h - the result document of a WebSocket run
 * ("rackbench-engine-ws", doc/output.md): the threads' clients, counts
 * and histograms merged, and written as JSON.
 */
#ifndef RB_WS_REPORT_H
#define RB_WS_REPORT_H

#include <stdio.h>

#include "report.h"

#define WS_FORMAT_VERSION 1

/* Writes r's document (every worker ran ws_protocol) to out. */
void ws_report_json(FILE *out, const run_result *r);

#endif
