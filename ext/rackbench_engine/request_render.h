/*
 * request_render.h - what the request path does with the request set
 * (requests.h): the next request a slot sends, a templated entry rendered
 * with the slot's variables, and each slot's own variables. Nothing here
 * allocates.
 */
#ifndef RB_REQUEST_RENDER_H
#define RB_REQUEST_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "requests.h"
#include "rng.h"
#include "session.h"

/* Renders a templated entry with a slot's variables into out (cap bytes,
 * at least t->render_bound). Returns the length and sets *head_len (where
 * a Cookie line goes), or SIZE_MAX when a variable is not set
 * (*missing_var: its index) or the result would not fit (-1). */
size_t requests_render(const request_template *t, session_vars *vars, char *out, size_t cap, size_t *head_len,
                       int *missing_var);

/* Gives a slot's variables its user (slot mod the @users count: every
 * "user.COLUMN") and seeds its {{random}} stream from seed and slot. */
void requests_slot_vars(const request_set *set, session_vars *vars, uint64_t seed, uint32_t slot);

/* Chooses the next request for a connection slot: its "first" entries in
 * order (*first_done counts them), then weighted random picks from rng. */
const request_template *requests_next(const request_set *set, rng *r, size_t *first_done);

#endif
