//! A mistyped command line (an unknown flag, a bad value, a missing argument) as one line on
//! stderr and exit status 1, as docs/operator.md promises for every person's mistake, with
//! clap's tip and the `--help` to read; `--help` and `--version` print as usual and exit 0.

use crate::flags::Cli;
use clap::error::ErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use std::process::ExitCode;

/// The parsed command line and clap's matches (which know where each value came from, for
/// the configuration file), or the exit status after saying what is wrong.
pub(crate) fn parse() -> Result<(Cli, ArgMatches), ExitCode> {
    let parsed = Cli::command().try_get_matches().and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let error = match parsed {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            Err(ExitCode::SUCCESS)
        }
        // `orchestrator worker` alone: the list of what it takes is the answer.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            Err(ExitCode::FAILURE)
        }
        _ => {
            let help = help_command(std::env::args().skip(1));
            crate::print_err(&format!("orchestrator: {}\n", one_line(&error.render().to_string(), &help)));
            Err(ExitCode::FAILURE)
        }
    }
}

/// The `--help` to read: `orchestrator` and the subcommands the arguments name.
fn help_command(args: impl Iterator<Item = String>) -> String {
    let mut command = Cli::command();
    let mut words = vec!["orchestrator".to_string()];
    for arg in args {
        let Some(sub) = command.find_subcommand(&arg).cloned() else { break };
        words.push(arg);
        command = sub;
    }
    format!("{} --help", words.join(" "))
}

/// Clap's several lines (the error, a tip, the usage, "for more information") as one: the
/// error and its tips, then the command whose `--help` to read.
pub(crate) fn one_line(rendered: &str, help: &str) -> String {
    let mut said: Vec<String> = Vec::new();
    for raw in rendered.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with("Usage: ") || line.starts_with("For more information") {
            continue;
        }
        // An indented line that is no tip continues the one before (a list of arguments).
        let continues = raw.starts_with(char::is_whitespace) && !line.starts_with("tip:");
        match said.last_mut() {
            Some(last) if continues => {
                last.push_str(if last.ends_with(':') { " " } else { ", " });
                last.push_str(line);
            }
            _ => said.push(line.strip_prefix("error: ").unwrap_or(line).to_string()),
        }
    }
    format!("{} (see `{help}`)", said.join("; "))
}

#[cfg(test)]
mod tests {
    use super::{help_command, one_line};

    #[test]
    fn clap_s_lines_become_one_naming_the_help_to_read() {
        let unknown = "error: unexpected argument '--lisen' found\n\n  tip: a similar argument exists: '--listen'\n\n\
                       Usage: orchestrator serve --listen <ADDR>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(unknown, "orchestrator serve --help"),
            "unexpected argument '--lisen' found; tip: a similar argument exists: '--listen' (see `orchestrator serve --help`)"
        );
    }

    #[test]
    fn a_list_of_missing_arguments_stays_in_its_sentence() {
        let missing = "error: the following required arguments were not provided:\n  <WORKER>\n  <REASON>...\n\n\
                       Usage: orchestrator worker stop <WORKER> <REASON>...\n";
        assert_eq!(
            one_line(missing, "orchestrator worker stop --help"),
            "the following required arguments were not provided: <WORKER>, <REASON>... (see `orchestrator worker stop --help`)"
        );
    }

    #[test]
    fn the_help_to_read_is_the_mistyped_subcommand_s() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>().into_iter();
        assert_eq!(help_command(args(&["worker", "stop", "--bad"])), "orchestrator worker stop --help");
        assert_eq!(help_command(args(&["serve", "--listen", "x"])), "orchestrator serve --help");
        assert_eq!(help_command(args(&["--nope"])), "orchestrator --help");
    }
}
