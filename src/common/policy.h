/*
 * policy.h: a role's seccomp allowlist as the build compiles it.
 *
 * The text lives in policy/ROLE.policy; policy/compile-policy.py turns it
 * into a C table of these rules at build time, so the running process never
 * parses policy text.  sandbox-seccomp.c loads a table with libseccomp.
 *
 * One policy line with N `||` alternatives becomes N rules for the same
 * system call: libseccomp ANDs the comparisons inside one rule, and a call
 * matching any rule gets that rule's action.
 */
#ifndef NBDCURLD_POLICY_H
#define NBDCURLD_POLICY_H

#include <stddef.h>
#include <stdint.h>

/* Comparisons in one alternative: one per argument at most (libseccomp
 * takes one comparison per argument in a rule), so six. */
#define POLICY_MAX_CONDS 6
/* Longest system call name or policy file name, with its NUL
 * (compile-policy.py refuses longer ones). */
#define POLICY_NAME_MAX 32

struct policy_cond {
  uint8_t arg;              /* 0 .. 5 */
  uint8_t op;               /* enum scmp_compare: SCMP_CMP_EQ, ..., SCMP_CMP_MASKED_EQ */
  uint64_t mask;            /* SCMP_CMP_MASKED_EQ only, else 0 */
  uint64_t value;
};

struct policy_rule {
  int syscall;              /* SCMP_SYS (name): native number or libseccomp pseudo number */
  int errno_value;          /* 0: allow; > 0: fail the call with this errno */
  unsigned ncond;
  struct policy_cond cond[POLICY_MAX_CONDS];
  /* Arrays, not pointers: a table of pointers must be relocated by the
   * loader in every process, which makes its pages private (a copy of
   * the three tables in each process); without one it stays shared. */
  char name[POLICY_NAME_MAX];   /* system call name, for messages */
  char file[POLICY_NAME_MAX];   /* "policy/ROLE.policy", for messages */
  unsigned line;
};

/* Generated tables, one pair per role (policy/meson.build). */
extern const struct policy_rule supervisor_policy_rules[];
extern const size_t supervisor_policy_nrules;
extern const struct policy_rule frontend_policy_rules[];
extern const size_t frontend_policy_nrules;
extern const struct policy_rule fetcher_policy_rules[];
extern const size_t fetcher_policy_nrules;
extern const struct policy_rule keyholder_policy_rules[];
extern const size_t keyholder_policy_nrules;
/* The file remover (policy/remover.policy). */
extern const struct policy_rule remover_policy_rules[];
extern const size_t remover_policy_nrules;
/* The fetcher of an export with unix-socket-path= (policy/fetcher-unix.policy). */
extern const struct policy_rule fetcher_unix_policy_rules[];
extern const size_t fetcher_unix_policy_nrules;
/* The fetcher launcher, whose filter its fetchers inherit
 * (policy/launcher.policy, fetcher-unix.policy, fetcher.policy). */
extern const struct policy_rule launcher_policy_rules[];
extern const size_t launcher_policy_nrules;

#endif
