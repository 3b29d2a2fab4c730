//! `strata sql-worker`: serves a strata database (a shard of a cluster) to SQL queries
//! planned in another process (`strata sql --cluster`), until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use strata::{Db, DbOptions};

/// The arguments of `strata sql-worker`.
#[derive(Debug, clap::Args)]
pub struct SqlWorkerArgs {
    /// The database directory (the shard's data).
    #[arg(long, default_value = "./strata-data")]
    pub data: PathBuf,
    /// The address to listen on (port 0: any free port). The address taken is printed as
    /// `listening on http://HOST:PORT`.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
}

/// `strata sql-worker`: serves until SIGINT or SIGTERM, then closes the database.
pub fn run(args: SqlWorkerArgs) -> Result<ExitCode, String> {
    use std::io::Write;
    let db = Db::open(&args.data, DbOptions::default())
        .map_err(|error| format!("cannot open {}: {error}", args.data.display()))?;
    let runtime = super::runtime()?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(args.listen))
        .map_err(|error| format!("cannot listen on {}: {error}", args.listen))?;
    let address = listener
        .local_addr()
        .map_err(|error| format!("cannot read the address listened on: {error}"))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])
    .map_err(|error| format!("cannot catch SIGINT and SIGTERM: {error}"))?;
    let signal_thread = std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            // The server may have stopped on its own; nothing is waiting then.
            let _ = stop.send(());
        }
    });
    println!("listening on http://{address}");
    std::io::stdout()
        .flush()
        .map_err(|error| format!("writing output: {error}"))?;
    let served = runtime.block_on(strata_sql::serve_worker(db.clone(), listener, async {
        // A dropped sender (no signal will come) also stops nothing: wait for a signal.
        let _ = stopped.await;
    }));
    drop(signal_thread);
    db.close()
        .map_err(|error| format!("closing {}: {error}", args.data.display()))?;
    served.map_err(|error| format!("serving: {error}"))?;
    Ok(ExitCode::SUCCESS)
}
