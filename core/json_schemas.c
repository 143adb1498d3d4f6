// SPDX-License-Identifier: Apache-2.0
/* The field tables of the messages that travel as JSON: OTLP's profiles
 * service, Pyroscope's push.v1 and Parca's WriteRaw. */
#include "proto_json.h"

#define F(j, p, n, k) {j, p, n, k, false, NULL}
#define R(j, p, n, k) {j, p, n, k, true, NULL}
#define M(j, p, n, m) {j, p, n, PJ_MSG, false, &m}
#define RM(j, p, n, m) {j, p, n, PJ_MSG, true, &m}

static const struct pj_message any_value, key_value;
static const struct pj_field array_value_f[] = {RM("values", "values", 1, any_value), {0}};
static const struct pj_message array_value = {array_value_f};
static const struct pj_field kvlist_f[] = {RM("values", "values", 1, key_value), {0}};
static const struct pj_message kvlist = {kvlist_f};
static const struct pj_field any_value_f[] = {
    F("stringValue", "string_value", 1, PJ_STRING), F("boolValue", "bool_value", 2, PJ_BOOL),
    F("intValue", "int_value", 3, PJ_I64), F("doubleValue", "double_value", 4, PJ_DOUBLE),
    M("arrayValue", "array_value", 5, array_value), M("kvlistValue", "kvlist_value", 6, kvlist),
    F("bytesValue", "bytes_value", 7, PJ_BYTES),
    F("stringValueStrindex", "string_value_strindex", 8, PJ_I32), {0}};
static const struct pj_message any_value = {any_value_f};
static const struct pj_field key_value_f[] = {
    F("key", "key", 1, PJ_STRING), M("value", "value", 2, any_value),
    F("keyStrindex", "key_strindex", 3, PJ_I32), {0}};
static const struct pj_message key_value = {key_value_f};
static const struct pj_field entity_ref_f[] = {
    F("schemaUrl", "schema_url", 1, PJ_STRING), F("type", "type", 2, PJ_STRING),
    R("idKeys", "id_keys", 3, PJ_STRING), R("descriptionKeys", "description_keys", 4, PJ_STRING),
    {0}};
static const struct pj_message entity_ref = {entity_ref_f};
static const struct pj_field resource_f[] = {
    RM("attributes", "attributes", 1, key_value),
    F("droppedAttributesCount", "dropped_attributes_count", 2, PJ_U32),
    RM("entityRefs", "entity_refs", 3, entity_ref), {0}};
static const struct pj_message resource = {resource_f};
static const struct pj_field scope_f[] = {
    F("name", "name", 1, PJ_STRING), F("version", "version", 2, PJ_STRING),
    RM("attributes", "attributes", 3, key_value),
    F("droppedAttributesCount", "dropped_attributes_count", 4, PJ_U32), {0}};
static const struct pj_message scope = {scope_f};
static const struct pj_field value_type_f[] = {
    F("typeStrindex", "type_strindex", 1, PJ_I32), F("unitStrindex", "unit_strindex", 2, PJ_I32),
    {0}};
static const struct pj_message value_type = {value_type_f};
static const struct pj_field sample_f[] = {
    F("stackIndex", "stack_index", 1, PJ_I32),
    R("attributeIndices", "attribute_indices", 2, PJ_I32), F("linkIndex", "link_index", 3, PJ_I32),
    R("values", "values", 4, PJ_I64), R("timestampsUnixNano", "timestamps_unix_nano", 5, PJ_FIXED64),
    {0}};
static const struct pj_message sample = {sample_f};
static const struct pj_field profile_f[] = {
    M("sampleType", "sample_type", 1, value_type), RM("samples", "samples", 2, sample),
    F("timeUnixNano", "time_unix_nano", 3, PJ_FIXED64), F("durationNano", "duration_nano", 4, PJ_U64),
    M("periodType", "period_type", 5, value_type), F("period", "period", 6, PJ_I64),
    F("profileId", "profile_id", 7, PJ_HEX),
    F("droppedAttributesCount", "dropped_attributes_count", 8, PJ_U32),
    F("originalPayloadFormat", "original_payload_format", 9, PJ_STRING),
    F("originalPayload", "original_payload", 10, PJ_BYTES),
    R("attributeIndices", "attribute_indices", 11, PJ_I32), {0}};
static const struct pj_message profile = {profile_f};
static const struct pj_field scope_profiles_f[] = {
    M("scope", "scope", 1, scope), RM("profiles", "profiles", 2, profile),
    F("schemaUrl", "schema_url", 3, PJ_STRING), {0}};
static const struct pj_message scope_profiles = {scope_profiles_f};
static const struct pj_field resource_profiles_f[] = {
    M("resource", "resource", 1, resource), RM("scopeProfiles", "scope_profiles", 2, scope_profiles),
    F("schemaUrl", "schema_url", 3, PJ_STRING), {0}};
static const struct pj_message resource_profiles = {resource_profiles_f};
static const struct pj_field mapping_f[] = {
    F("memoryStart", "memory_start", 1, PJ_U64), F("memoryLimit", "memory_limit", 2, PJ_U64),
    F("fileOffset", "file_offset", 3, PJ_U64), F("filenameStrindex", "filename_strindex", 4, PJ_I32),
    R("attributeIndices", "attribute_indices", 5, PJ_I32), {0}};
static const struct pj_message mapping = {mapping_f};
static const struct pj_field line_f[] = {
    F("functionIndex", "function_index", 1, PJ_I32), F("line", "line", 2, PJ_I64),
    F("column", "column", 3, PJ_I64), {0}};
static const struct pj_message line = {line_f};
static const struct pj_field location_f[] = {
    F("mappingIndex", "mapping_index", 1, PJ_I32), F("address", "address", 2, PJ_U64),
    RM("lines", "lines", 3, line), R("attributeIndices", "attribute_indices", 4, PJ_I32), {0}};
static const struct pj_message location = {location_f};
static const struct pj_field function_f[] = {
    F("nameStrindex", "name_strindex", 1, PJ_I32),
    F("systemNameStrindex", "system_name_strindex", 2, PJ_I32),
    F("filenameStrindex", "filename_strindex", 3, PJ_I32), F("startLine", "start_line", 4, PJ_I64),
    {0}};
static const struct pj_message function = {function_f};
static const struct pj_field link_f[] = {
    F("traceId", "trace_id", 1, PJ_HEX), F("spanId", "span_id", 2, PJ_HEX), {0}};
static const struct pj_message link = {link_f};
static const struct pj_field kvu_f[] = {
    F("keyStrindex", "key_strindex", 1, PJ_I32), M("value", "value", 2, any_value),
    F("unitStrindex", "unit_strindex", 3, PJ_I32), {0}};
static const struct pj_message kvu = {kvu_f};
static const struct pj_field stack_f[] = {
    R("locationIndices", "location_indices", 1, PJ_I32), {0}};
static const struct pj_message stack = {stack_f};
static const struct pj_field dictionary_f[] = {
    RM("mappingTable", "mapping_table", 1, mapping), RM("locationTable", "location_table", 2, location),
    RM("functionTable", "function_table", 3, function), RM("linkTable", "link_table", 4, link),
    R("stringTable", "string_table", 5, PJ_STRING),
    RM("attributeTable", "attribute_table", 6, kvu), RM("stackTable", "stack_table", 7, stack),
    {0}};
static const struct pj_message dictionary = {dictionary_f};
static const struct pj_field request_f[] = {
    RM("resourceProfiles", "resource_profiles", 1, resource_profiles),
    M("dictionary", "dictionary", 2, dictionary), {0}};
static const struct pj_message otlp_request = {request_f};
static const struct pj_field partial_f[] = {
    F("rejectedProfiles", "rejected_profiles", 1, PJ_I64),
    F("errorMessage", "error_message", 2, PJ_STRING), {0}};
static const struct pj_message partial = {partial_f};
static const struct pj_field response_f[] = {M("partialSuccess", "partial_success", 1, partial), {0}};
static const struct pj_message otlp_response = {response_f};


/* push.v1 */
static const struct pj_field label_pair_f[] = {
    F("name", "name", 1, PJ_STRING), F("value", "value", 2, PJ_STRING), {0}};
static const struct pj_message label_pair = {label_pair_f};
static const struct pj_field push_sample_f[] = {
    F("rawProfile", "raw_profile", 1, PJ_BYTES), F("ID", "ID", 2, PJ_STRING), {0}};
static const struct pj_message push_sample = {push_sample_f};
static const struct pj_field push_series_f[] = {
    RM("labels", "labels", 1, label_pair), RM("samples", "samples", 2, push_sample),
    RM("annotations", "annotations", 3, label_pair), {0}};
static const struct pj_message push_series = {push_series_f};
static const struct pj_field push_request_f[] = {RM("series", "series", 1, push_series), {0}};
static const struct pj_message push_request = {push_request_f};

/* parca.profilestore.v1alpha1 */
static const struct pj_field label_set_f[] = {RM("labels", "labels", 1, label_pair), {0}};
static const struct pj_message label_set = {label_set_f};
static const struct pj_field load_segment_f[] = {
    F("offset", "offset", 1, PJ_U64), F("vaddr", "vaddr", 2, PJ_U64), {0}};
static const struct pj_message load_segment = {load_segment_f};
static const struct pj_field executable_info_f[] = {
    F("elfType", "elf_type", 1, PJ_U32), M("loadSegment", "load_segment", 2, load_segment), {0}};
static const struct pj_message executable_info = {executable_info_f};
static const struct pj_field parca_sample_f[] = {
    F("rawProfile", "raw_profile", 1, PJ_BYTES),
    RM("executableInfo", "executable_info", 2, executable_info), {0}};
static const struct pj_message parca_sample = {parca_sample_f};
static const struct pj_field parca_series_f[] = {
    M("labels", "labels", 1, label_set), RM("samples", "samples", 2, parca_sample), {0}};
static const struct pj_message parca_series = {parca_series_f};
static const struct pj_field writeraw_request_f[] = {
    F("tenant", "tenant", 1, PJ_STRING), RM("series", "series", 2, parca_series),
    F("normalized", "normalized", 3, PJ_BOOL), {0}};
static const struct pj_message writeraw_request = {writeraw_request_f};

/* PushResponse and WriteRawResponse have no fields */
static const struct pj_field no_fields[] = {{0}};
static const struct pj_message empty = {no_fields};

const struct pj_message *profd_json_schema(enum profd_message which)
{
    switch (which) {
    case PROFD_MSG_OTLP_REQUEST: return &otlp_request;
    case PROFD_MSG_OTLP_RESPONSE: return &otlp_response;
    case PROFD_MSG_PUSH_REQUEST: return &push_request;
    case PROFD_MSG_WRITERAW_REQUEST: return &writeraw_request;
    case PROFD_MSG_PUSH_RESPONSE: case PROFD_MSG_WRITERAW_RESPONSE: return &empty;
    }
    return NULL;
}
