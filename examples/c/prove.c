/*
 * prove — prove a PoRep C2 with libcuzk, or verify a seal proof.
 *
 *   prove <params_dir> <c1.json> <sector_id> <prover_id_hex> <out.proof>
 *       Loads the SRS of the C1's registered proof from <params_dir> (the filecoin-proofs
 *       parameter cache layout: v28-*.params), proves <c1.json> (the output of filecoin-ffi's
 *       SealCommitPhase1, unchanged), writes the raw proof bytes to <out.proof> and prints the
 *       stage timings.
 *
 *   prove verify <params_dir> <registered_proof> <sector_id> <prover_id_hex> <comm_r_hex>
 *                <comm_d_hex> <ticket_hex> <seed_hex> <proof_file>
 *       Verifies a proof with the .vk file in <params_dir>. <registered_proof> is a
 *       filecoin-ffi number (5) or name (StackedDrg2KiBV1_1). 32-byte values are 64 hex digits.
 *
 * Exit status: 0 done (proof written, or proof valid), 1 error, 2 usage, 3 proof invalid.
 *
 * Build (see mk/examples.mk and tests/scripts/install.sh):
 *   cc -Wall -Wextra -Werror $(pkg-config --cflags cuzk) prove.c $(pkg-config --libs cuzk)
 */
#include <cuzk.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_USAGE = 2, EXIT_INVALID = 3 };


static const char *const STAGES[] = {"queue", "srs", "synthesis", "prove_queue", "prove", "verify", "total"};

/* Print a failed call's status and message, free the error, return EXIT_FAILURE. */
static int fail(const char *what, cuzk_status st, cuzk_error *err) {
    fprintf(stderr, "prove: %s: %s (status %d): %s\n", what, cuzk_status_name(st), (int)st,
            cuzk_error_message(err));
    cuzk_error_free(err);
    return EXIT_FAILURE;
}

/* Read a whole file; *out is malloc'ed (free it). */
static bool read_file(const char *path, uint8_t **out, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "prove: cannot open %s: %s\n", path, strerror(errno));
        return false;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    bool ok = buf && !ferror(f);
    if (!ok) fprintf(stderr, "prove: cannot read %s\n", path);
    fclose(f);
    if (!ok) {
        free(buf);
        return false;
    }
    *out = buf;
    *out_len = len;
    return true;
}

static bool write_file(const char *path, const uint8_t *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "prove: cannot create %s: %s\n", path, strerror(errno));
        return false;
    }
    bool ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) fprintf(stderr, "prove: cannot write %s\n", path);
    return ok;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Exactly 64 hex digits → 32 bytes. */
static bool parse_hex32(const char *what, const char *s, uint8_t out[32]) {
    if (strlen(s) != 64) {
        fprintf(stderr, "prove: %s must be 64 hex digits (32 bytes), got %zu characters\n", what, strlen(s));
        return false;
    }
    for (int i = 0; i < 32; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "prove: %s is not hex: %s\n", what, s);
            return false;
        }
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

static bool parse_u64(const char *what, const char *s, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "prove: %s is not an unsigned integer: %s\n", what, s);
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* A registered seal proof given as a number or a name (the library parses it). */
static bool parse_seal_proof(const char *s, int64_t *out) {
    cuzk_error *err = NULL;
    cuzk_status st = cuzk_registered_proof_parse(s, out, &err);
    if (st != CUZK_STATUS_OK) {
        fail("parsing the registered proof", st, err);
        return false;
    }
    return true;
}

/* {"params_dir": "<dir>"} with the path JSON-escaped; malloc'ed. */
static char *config_json(const char *params_dir) {
    size_t n = strlen(params_dir);
    char *out = malloc(n * 6 + 32), *p = out;
    if (!out) return NULL;
    p += sprintf(p, "{\"params_dir\":\"");
    for (const unsigned char *c = (const unsigned char *)params_dir; *c; c++) {
        if (*c == '"' || *c == '\\') {
            *p++ = '\\';
            *p++ = (char)*c;
        } else if (*c < 0x20) {
            p += sprintf(p, "\\u%04x", *c);
        } else {
            *p++ = (char)*c;
        }
    }
    strcpy(p, "\"}");
    return out;
}

static int new_engine(const char *params_dir, cuzk_engine **engine) {
    if (cuzk_abi_version() != CUZK_ABI_VERSION) {
        fprintf(stderr, "prove: libcuzk ABI version %u, but compiled against cuzk.h version %u\n",
                cuzk_abi_version(), (unsigned)CUZK_ABI_VERSION);
        return EXIT_FAILURE;
    }
    char *cfg = config_json(params_dir);
    if (!cfg) return EXIT_FAILURE;
    cuzk_error *err = NULL;
    cuzk_status st = cuzk_engine_new(cfg, engine, &err);
    free(cfg);
    return st == CUZK_STATUS_OK ? EXIT_SUCCESS : fail("creating the engine", st, err);
}

static int prove(char **argv) {
    const char *params_dir = argv[1], *c1_path = argv[2], *out_path = argv[5];
    uint64_t sector_id;
    uint8_t prover_id[32];
    if (!parse_u64("sector_id", argv[3], &sector_id) || !parse_hex32("prover_id", argv[4], prover_id)) {
        return EXIT_USAGE;
    }
    uint8_t *c1 = NULL;
    size_t c1_len = 0;
    if (!read_file(c1_path, &c1, &c1_len)) return EXIT_FAILURE;
    cuzk_engine *engine = NULL;
    cuzk_proof *proof = NULL;
    cuzk_error *err = NULL;
    cuzk_status st;
    int64_t seal_proof = -1; /* the SRS this C1 needs */
    if ((st = cuzk_c1_registered_proof(c1, c1_len, &seal_proof, &err)) != CUZK_STATUS_OK) {
        free(c1);
        return fail("reading the C1 output", st, err);
    }
    int rc = new_engine(params_dir, &engine);
    if (rc != EXIT_SUCCESS) goto out;

    double load_s = 0;
    if ((st = cuzk_srs_load(engine, seal_proof, NULL, &load_s, &err)) != CUZK_STATUS_OK) {
        rc = fail("loading the SRS", st, err);
        goto out;
    }
    printf("SRS %s loaded in %.2f s\n", cuzk_registered_proof_name(seal_proof), load_s);

    uint64_t job = 0;
    st = cuzk_submit_porep_c2(engine, c1, c1_len, sector_id, prover_id, 0, NULL, &job, &err);
    if (st != CUZK_STATUS_OK) {
        rc = fail("submitting the C2 job", st, err);
        goto out;
    }
    int32_t state = -1;
    if ((st = cuzk_job_wait(engine, job, -1, &state, &proof, &err)) != CUZK_STATUS_OK) {
        rc = fail("proving", st, err);
        goto out;
    }

    const uint8_t *bytes = NULL;
    size_t len = 0;
    if ((st = cuzk_proof_bytes(proof, &bytes, &len, &err)) != CUZK_STATUS_OK) {
        rc = fail("reading the proof", st, err);
        goto out;
    }
    if (!write_file(out_path, bytes, len)) {
        rc = EXIT_FAILURE;
        goto out;
    }
    printf("job %" PRIu64 ": %zu-byte proof written to %s\n", job, len, out_path);
    for (int32_t s = CUZK_STAGE_QUEUE; s <= CUZK_STAGE_TOTAL; s++) {
        double secs = 0;
        if ((st = cuzk_proof_timing(proof, s, &secs, &err)) != CUZK_STATUS_OK) {
            rc = fail("reading a timing", st, err);
            goto out;
        }
        printf("  %-12s %9.3f s\n", STAGES[s], secs);
    }
    char *timings = NULL;
    if ((st = cuzk_proof_timings_json(proof, &timings, &err)) != CUZK_STATUS_OK) {
        rc = fail("reading the timings", st, err);
        goto out;
    }
    printf("timings: %s\n", timings);
    cuzk_string_free(timings);
    rc = EXIT_SUCCESS;

out:
    cuzk_proof_free(proof);
    cuzk_engine_free(engine);
    free(c1);
    return rc;
}

static int verify(char **argv) {
    const char *params_dir = argv[2];
    int64_t seal_proof;
    uint64_t sector_id;
    uint8_t prover_id[32], comm_r[32], comm_d[32], ticket[32], seed[32];
    if (!parse_seal_proof(argv[3], &seal_proof) || !parse_u64("sector_id", argv[4], &sector_id) ||
        !parse_hex32("prover_id", argv[5], prover_id) || !parse_hex32("comm_r", argv[6], comm_r) ||
        !parse_hex32("comm_d", argv[7], comm_d) || !parse_hex32("ticket", argv[8], ticket) ||
        !parse_hex32("seed", argv[9], seed)) {
        return EXIT_USAGE;
    }
    uint8_t *proof = NULL;
    size_t proof_len = 0;
    if (!read_file(argv[10], &proof, &proof_len)) return EXIT_FAILURE;

    cuzk_engine *engine = NULL;
    int rc = new_engine(params_dir, &engine);
    if (rc == EXIT_SUCCESS) {
        cuzk_error *err = NULL;
        bool valid = false;
        cuzk_status st = cuzk_verify_seal(engine, seal_proof, comm_r, comm_d, prover_id, sector_id, ticket,
                                          seed, proof, proof_len, &valid, &err);
        if (st != CUZK_STATUS_OK) {
            rc = fail("verifying", st, err);
        } else {
            printf("proof %s: %s\n", argv[10], valid ? "valid" : "INVALID");
            rc = valid ? EXIT_SUCCESS : EXIT_INVALID;
        }
    }
    cuzk_engine_free(engine);
    free(proof);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "verify") != 0) return prove(argv);
    if (argc == 11 && strcmp(argv[1], "verify") == 0) return verify(argv);
    fprintf(stderr,
            "usage: %s <params_dir> <c1.json> <sector_id> <prover_id_hex> <out.proof>\n"
            "       %s verify <params_dir> <registered_proof> <sector_id> <prover_id_hex> <comm_r_hex>\n"
            "              <comm_d_hex> <ticket_hex> <seed_hex> <proof_file>\n"
            "(libcuzk %s)\n",
            argv[0], argv[0], cuzk_version());
    return EXIT_USAGE;
}
