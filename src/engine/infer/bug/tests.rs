use super::*;

#[test]
fn an_import_name_is_letters_digits_and_underscores() {
    assert!(import_name("vllm"));
    assert!(import_name("_private2"));
    assert!(!import_name("2fast"));
    assert!(!import_name("a b"));
    assert!(!import_name("x;rm"));
    assert!(!import_name(""));
}

#[test]
fn an_import_from_the_packages_own_module_is_told_from_another_packages() {
    assert!(imports_from_itself(
        "cannot import name 'cached_download' from 'vllm.utils' (/x/vllm/utils.py)",
        "vllm"
    ));
    assert!(imports_from_itself(
        "cannot import name 'X' from 'vllm'",
        "vllm"
    ));
    assert!(!imports_from_itself(
        "cannot import name 'cached_download' from 'huggingface_hub'",
        "vllm"
    ));
    assert!(!imports_from_itself("No module named 'vllm.x'", "vllm"));
}

fn bug(package: Option<&str>, message: &str, function: &str) -> Bug {
    Bug {
        shape: Shape::Unimplemented,
        package: package.map(str::to_string),
        exception: "NotImplementedError".into(),
        message: message.into(),
        function: function.into(),
        site: "module.py:103".into(),
    }
}

/// The query is percent-encoded whole: a message from a log cannot add a parameter or
/// leave the query (`&`, `#`, spaces, quotes are encoded).
#[test]
fn the_search_url_encodes_every_value_from_the_log() {
    let b = bug(Some("torch"), "", "forward");
    assert_eq!(
        b.search_url().as_deref(),
        Some("https://github.com/search?type=issues&q=torch%20NotImplementedError%20forward")
    );
    let hostile = bug(Some("torch"), "x&type=code#frag \"q\"", "forward");
    let url = hostile.search_url().expect("a url");
    let query = url
        .strip_prefix("https://github.com/search?type=issues&q=")
        .expect("the prefix");
    assert!(
        query.chars().all(|c| c.is_ascii_alphanumeric() || c == '%'),
        "{query}"
    );
    assert_eq!(bug(None, "", "f").search_url(), None);
}

#[test]
fn a_command_names_the_package_only() {
    let steps = bug(Some("torch"), "", "forward").steps();
    let commands: Vec<&str> = steps.iter().filter_map(|(_, c)| c.as_deref()).collect();
    assert_eq!(commands, ["pip show torch"]);
    assert!(bug(None, "", "f").steps().iter().all(|(_, c)| c.is_none()));
}
