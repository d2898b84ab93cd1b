//! The table of documented token formats, looked up by the first byte of every token:
//! prefix, length and alphabet, and the provider's checksum where the format has one.
//! Formats needing more than "prefix + run" call a matcher of `formats`.

use super::formats::{
    anthropic, azure_account_key, azure_shared_key, base64_pem, braintree, brevo, databricks,
    discord_hook, doppler_service, dynatrace, firebase_fcm, gitlab, gitlab_job, grafana_cloud,
    grafana_sa, jwt, mapbox, notion, openai_marked, postman, putty, sendgrid, sk_generic, slack,
    slack_app, slack_hook, sourcegraph, structural, teams_hook, telegram_in_url,
};
use super::text::{
    ALNUM, ALPHA, B64, B64URL, DIGIT, DOT, EQ, HEX, HEXL, Kind, LOWER, UPPER, US, at, base62_6,
    contains_ignore_case, crc32, ends_at, looks_placeholder, random_enough, run,
};
use super::{blocks, formats};

#[derive(Clone, Copy)]
enum Body {
    /// `min..=max` bytes of a character set right after the prefix, then no further letter,
    /// digit or byte of the set.
    Run { set: u16, min: u16, max: u16 },
    /// A matcher given the text from the token's first byte on; returns the token length.
    Fn(fn(&[u8]) -> Option<usize>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// The part after the prefix must not read as a placeholder and must look random.
    Random,
    /// Structured payloads (JSON, macaroons): only placeholder words are refused.
    Structured,
    /// GitHub's format, also npm's: 30 random base62 characters, then their CRC-32 in six
    /// base62 digits.
    Crc32,
}

pub(super) struct Rule {
    prefix: &'static [u8],
    body: Body,
    check: Check,
    pub(super) provider: &'static str,
    pub(super) kind: &'static str,
}

const fn r(set: u16, min: u16, max: u16) -> Body {
    Body::Run { set, min, max }
}

const fn rule(
    prefix: &'static [u8],
    body: Body,
    check: Check,
    provider: &'static str,
    kind: &'static str,
) -> Rule {
    Rule {
        prefix,
        body,
        check,
        provider,
        kind,
    }
}

use Check::{Crc32, Random, Structured};

/// Prefixed token formats, grouped by first byte (checked at compile time); within a group
/// a prefix comes before any shorter prefix of it. Formats from the providers'
/// documentation, cross-checked with gitleaks' rule set.
#[rustfmt::skip]
pub(super) const RULES: &[Rule] = &[
    rule(b"1//0", r(B64URL, 40, 512), Random, "Google", "OAuth refresh token"),
    rule(b"AKIA", r(UPPER | DIGIT, 16, 16), Random, "AWS", "access key id"),
    rule(b"ASIA", r(UPPER | DIGIT, 16, 16), Random, "AWS", "temporary access key id"),
    rule(b"ABIA", r(UPPER | DIGIT, 16, 16), Random, "AWS", "STS bearer token id"),
    rule(b"ACCA", r(UPPER | DIGIT, 16, 16), Random, "AWS", "context-specific credential id"),
    rule(b"AIza", r(B64URL, 35, 35), Random, "Google", "API key"),
    rule(b"AGE-SECRET-KEY-1", r(UPPER | DIGIT, 58, 58), Random, "age", "secret key"),
    rule(b"ATATT3", r(B64URL | EQ, 180, 200), Random, "Atlassian", "API token"),
    rule(b"ATBB", r(ALNUM, 32, 32), Random, "Bitbucket", "app password"),
    rule(b"AKCp", r(ALNUM, 69, 69), Random, "JFrog", "API key"),
    rule(b"AAAA", Body::Fn(firebase_fcm), Random, "Firebase", "Cloud Messaging server key"),
    rule(b"AccountKey=", Body::Fn(azure_account_key), Random, "Azure", "storage account key"),
    rule(b"CLOJARS_", r(ALNUM, 60, 60), Random, "Clojars", "deploy token"),
    rule(b"EZAK", r(ALNUM, 54, 54), Random, "EasyPost", "API key"),
    rule(b"EAAA", r(B64URL, 60, 60), Random, "Square", "access token"),
    rule(b"GR1348941", r(B64URL, 20, 20), Random, "GitLab", "runner registration token"),
    rule(b"GOCSPX-", r(B64URL, 28, 28), Random, "Google", "OAuth client secret"),
    rule(b"HRKU-AA", r(B64URL, 58, 58), Random, "Heroku", "API key"),
    rule(b"LTAI", r(ALNUM, 20, 20), Random, "Alibaba Cloud", "AccessKey ID"),
    rule(b"LS0tLS1CRUdJTi", Body::Fn(base64_pem), Structured, "", "base64-encoded private key"),
    rule(b"NRAK-", r(UPPER | DIGIT, 27, 27), Random, "New Relic", "user API key"),
    rule(b"NRII-", r(B64URL, 32, 32), Random, "New Relic", "insert key"),
    rule(b"PMAK-", Body::Fn(postman), Random, "Postman", "API key"),
    rule(b"PuTTY-User-Key-File-", Body::Fn(putty), Structured, "PuTTY", "private key file"),
    rule(b"SG.", Body::Fn(sendgrid), Random, "SendGrid", "API key"),
    rule(b"SK", r(HEX, 32, 32), Random, "Twilio", "API key"),
    rule(b"SharedAccessKey=", Body::Fn(azure_shared_key), Random, "Azure", "shared access key"),
    rule(b"access_token$production$", Body::Fn(braintree), Random, "Braintree", "access token"),
    rule(b"api_org_", r(ALPHA, 34, 34), Random, "Hugging Face", "organization API token"),
    rule(b"bot", Body::Fn(telegram_in_url), Random, "Telegram", "bot token"),
    rule(b"cio", r(ALNUM, 32, 32), Random, "crates.io", "API token"),
    rule(b"dapi", Body::Fn(databricks), Random, "Databricks", "access token"),
    rule(b"dckr_pat_", r(B64URL, 27, 40), Random, "Docker Hub", "personal access token"),
    rule(b"dckr_oat_", r(B64URL, 27, 40), Random, "Docker Hub", "organization access token"),
    rule(b"discord.com/api/webhooks/", Body::Fn(discord_hook), Random, "Discord", "webhook URL"),
    rule(b"discordapp.com/api/webhooks/", Body::Fn(discord_hook), Random, "Discord", "webhook URL"),
    rule(b"dop_v1_", r(HEXL, 64, 64), Random, "DigitalOcean", "personal access token"),
    rule(b"doo_v1_", r(HEXL, 64, 64), Random, "DigitalOcean", "OAuth token"),
    rule(b"dor_v1_", r(HEXL, 64, 64), Random, "DigitalOcean", "refresh token"),
    rule(b"dp.pt.", r(ALNUM, 40, 44), Random, "Doppler", "personal token"),
    rule(b"dp.st.", Body::Fn(doppler_service), Random, "Doppler", "service token"),
    rule(b"dp.ct.", r(ALNUM, 40, 44), Random, "Doppler", "CLI token"),
    rule(b"dp.sa.", r(ALNUM, 40, 44), Random, "Doppler", "service account token"),
    rule(b"dp.scim.", r(ALNUM, 40, 44), Random, "Doppler", "SCIM token"),
    rule(b"dp.audit.", r(ALNUM, 40, 44), Random, "Doppler", "audit token"),
    rule(b"dt0c01.", Body::Fn(dynatrace), Random, "Dynatrace", "API token"),
    rule(b"eyJ", Body::Fn(jwt), Structured, "", "JSON Web Token"),
    rule(b"fo1_", r(B64URL, 43, 43), Random, "Fly.io", "access token"),
    rule(b"ghp_", r(ALNUM, 36, 36), Crc32, "GitHub", "personal access token"),
    rule(b"gho_", r(ALNUM, 36, 36), Crc32, "GitHub", "OAuth access token"),
    rule(b"ghu_", r(ALNUM, 36, 36), Crc32, "GitHub", "user-to-server token"),
    rule(b"ghs_", r(ALNUM, 36, 36), Crc32, "GitHub", "server-to-server token"),
    rule(b"ghr_", r(ALNUM, 36, 36), Crc32, "GitHub", "refresh token"),
    rule(b"github_pat_", r(ALNUM | US, 82, 82), Random, "GitHub", "fine-grained personal access token"),
    rule(b"glpat-", Body::Fn(gitlab), Random, "GitLab", "personal access token"),
    rule(b"glagent-", r(B64URL, 50, 50), Random, "GitLab", "agent token"),
    rule(b"glcbt-", Body::Fn(gitlab_job), Random, "GitLab", "CI/CD job token"),
    rule(b"gldt-", Body::Fn(gitlab), Random, "GitLab", "deploy token"),
    rule(b"glffct-", Body::Fn(gitlab), Random, "GitLab", "feature flag client token"),
    rule(b"glft-", Body::Fn(gitlab), Random, "GitLab", "feed token"),
    rule(b"glimt-", r(B64URL, 25, 25), Random, "GitLab", "incoming mail token"),
    rule(b"gloas-", r(B64URL, 64, 64), Random, "GitLab", "OAuth application secret"),
    rule(b"glptt-", r(HEXL, 40, 40), Random, "GitLab", "pipeline trigger token"),
    rule(b"glrt-", Body::Fn(gitlab), Random, "GitLab", "runner authentication token"),
    rule(b"glsoat-", Body::Fn(gitlab), Random, "GitLab", "SCIM token"),
    rule(b"glc_", Body::Fn(grafana_cloud), Structured, "Grafana", "Cloud access policy token"),
    rule(b"glsa_", Body::Fn(grafana_sa), Random, "Grafana", "service account token"),
    rule(b"gsk_", r(ALNUM, 52, 52), Random, "Groq", "API key"),
    rule(b"hf_", r(ALPHA, 34, 34), Random, "Hugging Face", "access token"),
    rule(b"hooks.slack.com/", Body::Fn(slack_hook), Random, "Slack", "webhook URL"),
    rule(b"hvs.", r(B64URL, 90, 120), Random, "HashiCorp Vault", "service token"),
    rule(b"hvb.", r(B64URL, 138, 300), Random, "HashiCorp Vault", "batch token"),
    rule(b"lin_api_", r(ALNUM, 40, 40), Random, "Linear", "API key"),
    rule(b"lin_oauth_", r(HEXL, 64, 64), Random, "Linear", "OAuth token"),
    rule(b"npm_", r(ALNUM, 36, 36), Crc32, "npm", "access token"),
    rule(b"ntn_", Body::Fn(notion), Random, "Notion", "integration token"),
    rule(b"ops_eyJ", r(B64 | EQ, 250, 4000), Structured, "1Password", "service account token"),
    rule(b"oy2", r(LOWER | DIGIT, 43, 43), Random, "NuGet", "API key"),
    rule(b"pypi-AgEIcHlwaS5vcmc", r(B64URL, 50, 1000), Structured, "PyPI", "API token"),
    rule(b"pypi-AgENdGVzdC5weXBpLm9yZw", r(B64URL, 50, 1000), Structured, "TestPyPI", "API token"),
    rule(b"pnu_", r(ALNUM, 36, 36), Random, "Prefect", "API key"),
    rule(b"pplx-", r(ALNUM, 48, 48), Random, "Perplexity", "API key"),
    rule(b"pscale_oauth_", r(B64URL | DOT | EQ, 32, 64), Random, "PlanetScale", "OAuth token"),
    rule(b"pscale_pw_", r(B64URL | DOT | EQ, 32, 64), Random, "PlanetScale", "database password"),
    rule(b"pscale_tkn_", r(B64URL | DOT | EQ, 32, 64), Random, "PlanetScale", "service token"),
    rule(b"pul-", r(HEXL, 40, 40), Random, "Pulumi", "access token"),
    rule(b"r8_", r(ALNUM, 37, 37), Random, "Replicate", "API token"),
    rule(b"rdme_", r(LOWER | DIGIT, 70, 70), Random, "ReadMe", "API key"),
    rule(b"rk_live_", r(ALNUM, 10, 247), Random, "Stripe", "restricted key"),
    rule(b"rk_test_", r(ALNUM, 10, 247), Random, "Stripe", "restricted test key"),
    rule(b"rubygems_", r(HEXL, 48, 48), Random, "RubyGems", "API key"),
    rule(b"sb_secret_", r(B64URL, 20, 64), Random, "Supabase", "secret key"),
    rule(b"sbp_", r(HEXL, 40, 40), Random, "Supabase", "access token"),
    rule(b"secret_", r(ALNUM, 43, 43), Random, "Notion", "integration secret"),
    rule(b"sgp_", Body::Fn(sourcegraph), Random, "Sourcegraph", "access token"),
    rule(b"shpat_", r(HEX, 32, 32), Random, "Shopify", "access token"),
    rule(b"shpca_", r(HEX, 32, 32), Random, "Shopify", "custom app access token"),
    rule(b"shppa_", r(HEX, 32, 32), Random, "Shopify", "private app access token"),
    rule(b"shpss_", r(HEX, 32, 32), Random, "Shopify", "shared secret"),
    rule(b"sk-ant-admin01-", Body::Fn(anthropic), Random, "Anthropic", "admin API key"),
    rule(b"sk-ant-api03-", Body::Fn(anthropic), Random, "Anthropic", "API key"),
    rule(b"sk-ant-oat01-", Body::Fn(anthropic), Random, "Anthropic", "OAuth access token"),
    rule(b"sk-ant-ort01-", Body::Fn(anthropic), Random, "Anthropic", "OAuth refresh token"),
    rule(b"sk-or-v1-", r(HEXL, 64, 64), Random, "OpenRouter", "API key"),
    rule(b"sk-proj-", r(B64URL, 40, 300), Random, "OpenAI", "project API key"),
    rule(b"sk-svcacct-", r(B64URL, 40, 300), Random, "OpenAI", "service account key"),
    rule(b"sk-admin-", r(B64URL, 40, 300), Random, "OpenAI", "admin key"),
    rule(b"sk-", Body::Fn(openai_marked), Random, "OpenAI", "API key"),
    rule(b"sk-", Body::Fn(sk_generic), Random, "OpenAI-style", "API key"),
    rule(b"sk.eyJ", Body::Fn(mapbox), Structured, "Mapbox", "secret access token"),
    rule(b"sk_live_", r(ALNUM, 10, 247), Random, "Stripe", "secret key"),
    rule(b"sk_test_", r(ALNUM, 10, 247), Random, "Stripe", "test secret key"),
    rule(b"sntrys_", r(B64 | EQ | US, 60, 600), Structured, "Sentry", "organization auth token"),
    rule(b"sntryu_", r(HEXL, 64, 64), Random, "Sentry", "user auth token"),
    rule(b"sq0atp-", r(B64URL, 22, 22), Random, "Square", "access token"),
    rule(b"sq0csp-", r(B64URL, 43, 43), Random, "Square", "application secret"),
    rule(b"webhook.office.com/webhookb2/", Body::Fn(teams_hook), Random, "Microsoft Teams", "webhook URL"),
    rule(b"whsec_", r(B64 | EQ, 32, 64), Random, "Stripe", "webhook signing secret"),
    rule(b"xai-", r(ALNUM, 80, 80), Random, "xAI", "API key"),
    rule(b"xapp-", Body::Fn(slack_app), Random, "Slack", "app-level token"),
    rule(b"xkeysib-", Body::Fn(brevo), Random, "Brevo", "API key"),
    rule(b"xoxe.xoxb-", Body::Fn(slack), Random, "Slack", "configuration token"),
    rule(b"xoxe.xoxp-", Body::Fn(slack), Random, "Slack", "configuration token"),
    rule(b"xoxa-", Body::Fn(slack), Random, "Slack", "workspace access token"),
    rule(b"xoxb-", Body::Fn(slack), Random, "Slack", "bot token"),
    rule(b"xoxe-", Body::Fn(slack), Random, "Slack", "refresh token"),
    rule(b"xoxp-", Body::Fn(slack), Random, "Slack", "user token"),
    rule(b"xoxr-", Body::Fn(slack), Random, "Slack", "refresh token"),
    rule(b"xoxs-", Body::Fn(slack), Random, "Slack", "session token"),
    rule(b"ya29.", r(B64URL, 30, 2048), Random, "Google", "OAuth access token"),
];

const fn build_index(rules: &[Rule]) -> [(u8, u8); 256] {
    let mut idx = [(0u8, 0u8); 256];
    let mut i = 0;
    while i < rules.len() {
        let c = rules[i].prefix[0] as usize;
        if idx[c].1 == 0 {
            idx[c].0 = i as u8;
        } else {
            assert!(
                idx[c].0 as usize + idx[c].1 as usize == i,
                "RULES must be grouped by first byte"
            );
        }
        idx[c].1 += 1;
        i += 1;
    }
    assert!(rules.len() < 256);
    idx
}

/// Keys that providers publish in their documentation as examples. (AWS's end in
/// `EXAMPLE` and pass as placeholders; jwt.io's token is recognised by its payload.)
const DOCUMENTED: [&[u8]; 2] = [
    concat!("sk_test_", "4eC39HqLyjWDarjtT1zdp7dc").as_bytes(),
    concat!("sk_test_", "BQokikJOvBiI2HlWgH4olfQ2").as_bytes(),
];

/// For each first byte: the start and length of its group in [`RULES`].
static INDEX: [(u8, u8); 256] = build_index(RULES);

/// A credential starting at `i`, which the caller guarantees is a token boundary.
/// Returns what it is and where it ends.
pub(super) fn token_at(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    let c = *b.get(i)?;
    let (start, n) = INDEX[usize::from(c)];
    let group = RULES.get(usize::from(start)..usize::from(start) + usize::from(n))?;
    let second = b.get(i + 1);
    for rule in group {
        // The second byte rules most of a group out before the full comparison.
        if rule.prefix.get(1).is_some_and(|p| Some(p) != second) || !at(b, i, rule.prefix) {
            continue;
        }
        let p = i + rule.prefix.len();
        let end = match rule.body {
            Body::Run { set, min, max } => {
                let n = run(b, p, set, usize::from(max) + 1);
                if n < usize::from(min) || n > usize::from(max) || !ends_at(b, p + n) {
                    continue;
                }
                p + n
            }
            Body::Fn(f) => match f(&b[i..]) {
                Some(len) if len >= rule.prefix.len() => i + len,
                _ => continue,
            },
        };
        let body = &b[p..end];
        let ok = match rule.check {
            Random => !looks_placeholder(body) && random_enough(body),
            Structured => !has_placeholder_word(body),
            Crc32 => crc_ok(body),
        };
        if ok && !DOCUMENTED.contains(&&b[i..end]) {
            return Some(((rule.provider, rule.kind), end));
        }
    }
    structural(b, i)
}

fn has_placeholder_word(v: &[u8]) -> bool {
    [&b"example"[..], b"xxxx", b"your", b"placeholder", b"dummy"]
        .iter()
        .any(|w| contains_ignore_case(v, w))
}

fn crc_ok(body: &[u8]) -> bool {
    body.len() == 36 && base62_6(crc32(&body[..30]))[..] == body[30..]
}

/// The catalogue entries contributed by this module.
pub(super) fn kinds() -> impl Iterator<Item = Kind> {
    RULES
        .iter()
        .map(|r| (r.provider, r.kind))
        .chain(formats::KINDS.iter().copied())
        .chain(blocks::KINDS.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_covers_every_rule() {
        let mut seen = 0;
        for c in 0..=255u8 {
            let (start, n) = INDEX[usize::from(c)];
            for rule in &RULES[usize::from(start)..usize::from(start) + usize::from(n)] {
                assert_eq!(rule.prefix[0], c);
                seen += 1;
            }
        }
        assert_eq!(seen, RULES.len());
    }

    #[test]
    fn a_longer_prefix_comes_before_its_own_prefix() {
        for (i, a) in RULES.iter().enumerate() {
            for b in &RULES[i + 1..] {
                assert!(
                    !(b.prefix.len() > a.prefix.len() && b.prefix.starts_with(a.prefix)),
                    "{} must come before {}",
                    String::from_utf8_lossy(b.prefix),
                    String::from_utf8_lossy(a.prefix)
                );
            }
        }
    }

    #[test]
    fn github_checksum_is_crc32_in_base62() {
        // A body whose last six characters are the checksum of the first thirty.
        let random = b"Zk3pQ9xL2mVt7Rb1Yc8Nw4Hs6Jd0Fg";
        let mut body = random.to_vec();
        body.extend_from_slice(&base62_6(crc32(random)));
        assert!(crc_ok(&body));
        body[5] ^= 1;
        assert!(!crc_ok(&body));
    }
}
