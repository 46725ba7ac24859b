/*
 * options-conffile.c: --config FILE, nbdcurld.conf(5).
 *
 * conffile.c splits the file into settings and [export NAME] sections;
 * here each becomes the option code and argument the command line would
 * give (conf_next), and options_parse's handlers take it: a setting is
 * checked by the same code wherever it is written.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "options-internal.h"

/* Secrets: in a file, named by file (+FILE) or descriptor (-FD) only,
 * never written there (a file is copied, backed up, and shown more
 * readily than a password is typed): these options and the KEY_SECRET
 * keys. */
static const char *const conf_secret_names[] = {
  "auth-password",
};
/* Settings whose value is a path; a relative one is taken from the
 * file's directory, as are the +FILE of secrets and of url: these
 * options and the KEY_PATH keys. */
static const char *const conf_path_names[] = {
  "tls-certificates", "tls-psk", "pidfile", "unix",
};

static bool
in_list (const char *name, const char *const *list, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    if (strcmp (name, list[i]) == 0)
      return true;
  return false;
}
#define IN_LIST(name, list) in_list (name, list, sizeof list / sizeof list[0])

/* Is name a key that a configuration file gives as conf says? */
static bool
key_conf_is (const char *name, enum curl_key_conf conf)
{
  int i = key_index (name);
  return i >= 0 && key_names[i].conf == conf;
}
#define CONF_IS_SECRET(name) \
  (IN_LIST (name, conf_secret_names) || key_conf_is (name, KEY_SECRET))
#define CONF_IS_PATH(name) \
  (IN_LIST (name, conf_path_names) || key_conf_is (name, KEY_PATH))

/* dir/path, or path when it is absolute: kept for the process's life. */
static char *
conf_relative (const struct conf_reading *cr, const char *prefix, const char *path)
{
  char *abs;

  if (path[0] == '/')
    return NULL;
  if (asprintf (&abs, "%s%s/%s", prefix, cr->f->dir, path) == -1)
    fatal_errno ("asprintf");
  return abs;
}

/* A setting's value as the command line would give it. */
static char *
conf_value (const struct conf_reading *cr, const char *name, char *v)
{
  char *abs = NULL;

  if (CONF_IS_SECRET (name)) {
    if (!((v[0] == '+' && v[1] != '\0') ||
          (v[0] == '-' && v[1] != '\0' && strspn (v + 1, "0123456789") == strlen (v + 1))))
      usage_error ("%s: a configuration file names a secret by the file it is in "
                   "(%s = +FILE) or a descriptor (%s = -FD), never the secret itself",
                   name, name, name);
  }
  if ((CONF_IS_SECRET (name) || strcmp (name, "url") == 0) && v[0] == '+')
    abs = conf_relative (cr, "+", v + 1);
  else if (CONF_IS_PATH (name) && v[0] != '\0' &&
           !(strcmp (name, "unix") == 0 && strcmp (v, "-") == 0))
    abs = conf_relative (cr, "", v);
  return abs ? abs : v;
}

static bool
conf_is_readonly (const char *name)
{
  return strcmp (name, "readonly") == 0 || strcmp (name, "read-only") == 0;
}

/* [export NAME]: its url and readonly lines are taken now, wherever they
 * are in the section, so that the export exists before its other lines
 * give it keys. */
static int
conf_section (struct conf_reading *cr, const struct conf_item *section)
{
  size_t i;
  unsigned url_line = 0;

  cr->in_section = true;
  cr->export_url = NULL;
  cr->export_ro = false;
  for (i = cr->next; i < cr->f->nitems && cr->f->items[i].kind == CONF_SETTING; i++) {
    const struct conf_item *it = &cr->f->items[i];
    conf_where_line = it->line;
    if (strcmp (it->name, "url") == 0) {
      if (cr->export_url)
        usage_error ("a second url for export \"%s\" (the first is on line %u)",
                     section->name, url_line);
      if (it->value == NULL || it->value[0] == '\0')
        usage_error ("url needs a value: url = URL");
      cr->export_url = conf_value (cr, "url", it->value);
      url_line = it->line;
      cr->export_url_line = it->line;
    }
    else if (conf_is_readonly (it->name)) {
      if (it->value)
        usage_error ("%s takes no value: write %s alone", it->name, it->name);
      cr->export_ro = true;
    }
  }
  conf_where_line = section->line;
  if (cr->export_url == NULL)
    usage_error ("[export %s] has no url = URL line", section->name);
  optarg = section->name;
  return OPT_CONF_EXPORT;
}

/* One NAME = VALUE (or NAME) line. */
static int
conf_setting (struct conf_reading *cr, const struct conf_item *it)
{
  const char *name = it->name;
  size_t i;

  /* A key before an option of the same name (user, connections, timeout,
   * cainfo, capath): the file is mostly about exports, and keys are what
   * an export takes. */
  if (key_index (name) >= 0) {
    char *kv;
    if (it->value == NULL)
      usage_error ("%s needs a value: %s = VALUE", name, name);
    if (asprintf (&kv, "%s=%s", name, conf_value (cr, name, it->value)) == -1)
      fatal_errno ("asprintf");
    optarg = kv;
    return 1;
  }
  if (cr->in_section && strcmp (name, "description") == 0) {
    if (it->value == NULL)
      usage_error ("description needs a value: description = TEXT");
    optarg = it->value;
    return OPT_CONF_DESCRIPTION;
  }
  if (strcmp (name, "config") == 0)
    usage_error ("config: a configuration file cannot name another; give each "
                 "with its own --config");
  if (strcmp (name, "export") == 0 || strcmp (name, "export-ro") == 0)
    usage_error ("%s: in a configuration file an export is a section: "
                 "[export NAME] and then url = URL%s", name,
                 name[6] ? " and readonly" : "");
  if (strcmp (name, "group") == 0)
    usage_error ("group: whom nbdcurld runs as (--user, --group) is given on the "
                 "command line; in this file user is the web server's user name (user=)");
  if (strcmp (name, "help") == 0 || strcmp (name, "version") == 0)
    usage_error ("%s: not a setting", name);
  for (i = 0; long_options[i].name; i++)
    if (strcmp (name, long_options[i].name) == 0)
      break;
  if (long_options[i].name == NULL)
    usage_error ("unknown setting %s: did you mean %s?", name, nearest_name (name, true));
  if (cr->in_section && strcmp (name, "allow") != 0)
    usage_error ("%s applies to every export, not to one: put it before the first "
                 "[export] section", name);
  if (long_options[i].has_arg == no_argument) {
    if (it->value)
      usage_error ("%s takes no value: write %s alone", name, name);
    optarg = NULL;
  }
  else {
    if (it->value == NULL)
      usage_error ("%s needs a value: %s = VALUE", name, name);
    optarg = conf_value (cr, name, it->value);
  }
  return long_options[i].val;
}

/* The next setting of the file being read, as an option code with its
 * argument in optarg (where options_parse finds getopt's), or 0 at its
 * end. */
int
conf_next (struct conf_reading *cr)
{
  while (cr->next < cr->f->nitems) {
    const struct conf_item *it = &cr->f->items[cr->next++];
    conf_where_line = it->line;
    if (it->kind == CONF_SECTION)
      return conf_section (cr, it);
    /* Taken with the section's header. */
    if (cr->in_section && (strcmp (it->name, "url") == 0 || conf_is_readonly (it->name)))
      continue;
    return conf_setting (cr, it);
  }
  conf_where_path = NULL;
  return 0;
}
