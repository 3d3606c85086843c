//! LDAP's names for its operations and result codes (RFC 4511 4.2 to 4.14, and the
//! codes of the IANA registry Suricata names), shared by the rules that name them
//! (`ldap.request.operation:search_request`) and the logs that write them.

/// Protocol operations by name, as `ldap.*.operation` reads them and EVE writes them.
pub const OPERATIONS: &[(&str, u32)] = &[
    ("bind_request", 0),
    ("bind_response", 1),
    ("unbind_request", 2),
    ("search_request", 3),
    ("search_result_entry", 4),
    ("search_result_done", 5),
    ("modify_request", 6),
    ("modify_response", 7),
    ("add_request", 8),
    ("add_response", 9),
    ("del_request", 10),
    ("del_response", 11),
    ("mod_dn_request", 12),
    ("mod_dn_response", 13),
    ("compare_request", 14),
    ("compare_response", 15),
    ("abandon_request", 16),
    ("search_result_reference", 19),
    ("extended_request", 23),
    ("extended_response", 24),
    ("intermediate_response", 25),
];

/// Result codes by name, as `ldap.responses.result_code` reads them and EVE writes
/// them.
pub const RESULT_CODES: &[(&str, u32)] = &[
    ("success", 0),
    ("operations_error", 1),
    ("protocol_error", 2),
    ("time_limit_exceeded", 3),
    ("size_limit_exceeded", 4),
    ("compare_false", 5),
    ("compare_true", 6),
    ("auth_method_not_supported", 7),
    ("stronger_auth_required", 8),
    ("referral", 10),
    ("admin_limit_exceeded", 11),
    ("unavailable_critical_extension", 12),
    ("confidentiality_required", 13),
    ("sasl_bind_in_progress", 14),
    ("no_such_attribute", 16),
    ("undefined_attribute_type", 17),
    ("inappropriate_matching", 18),
    ("constraint_violation", 19),
    ("attribute_or_value_exists", 20),
    ("invalid_attribute_syntax", 21),
    ("no_such_object", 32),
    ("alias_problem", 33),
    ("invalid_dns_syntax", 34),
    ("is_leaf", 35),
    ("alias_dereferencing_problem", 36),
    ("inappropriate_authentication", 48),
    ("invalid_credentials", 49),
    ("insufficient_access_rights", 50),
    ("busy", 51),
    ("unavailable", 52),
    ("unwilling_to_perform", 53),
    ("loop_detect", 54),
    ("sort_control_missing", 60),
    ("offset_range_error", 61),
    ("naming_violation", 64),
    ("object_class_violation", 65),
    ("not_allowed_on_non_leaf", 66),
    ("not_allowed_on_rdn", 67),
    ("entry_already_exists", 68),
    ("object_class_mods_prohibited", 69),
    ("results_too_large", 70),
    ("affects_multiple_dsas", 71),
    ("control_error", 76),
    ("other", 80),
    ("server_down", 81),
    ("local_error", 82),
    ("encoding_error", 83),
    ("decoding_error", 84),
    ("timeout", 85),
    ("auth_unknown", 86),
    ("filter_error", 87),
    ("user_canceled", 88),
    ("param_error", 89),
    ("no_memory", 90),
    ("connect_error", 91),
    ("not_supported", 92),
    ("control_not_found", 93),
    ("no_results_returned", 94),
    ("more_results_to_return", 95),
    ("client_loop", 96),
    ("referral_limit_exceeded", 97),
    ("invalid_response", 100),
    ("ambiguous_response", 101),
    ("tls_not_supported", 112),
    ("intermediate_response", 113),
    ("unknown_type", 114),
    ("canceled", 118),
    ("no_such_operation", 119),
    ("too_late", 120),
    ("cannot_cancel", 121),
    ("assertion_failed", 122),
    ("authorization_denied", 123),
    ("e_sync_refresh_required", 4096),
    ("no_operation", 16654),
];

/// The name of `n` in `table` (its number when it has none).
pub fn name_of(table: &[(&str, u32)], n: u32) -> String {
    match table.iter().find(|(_, v)| *v == n) {
        Some((name, _)) => (*name).to_string(),
        None => n.to_string(),
    }
}

/// The number a name of `table` stands for.
pub fn number_of(table: &[(&str, u32)], name: &str) -> Option<u32> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for table in [OPERATIONS, RESULT_CODES] {
            for &(n, v) in table {
                assert_eq!(number_of(table, n), Some(v));
                assert_eq!(name_of(table, v), n);
            }
        }
        assert_eq!(name_of(OPERATIONS, 17), "17");
        assert_eq!(number_of(RESULT_CODES, "nonsense"), None);
    }
}
