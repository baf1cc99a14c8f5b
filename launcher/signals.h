#pragma once
// brasarun's signal handling: handlers only write to a pipe that the main
// loop polls (the self-pipe trick), so nothing unsafe runs in a handler.

#include <string>

namespace brasarun {

// Installs handlers for SIGINT, SIGTERM, SIGHUP (to forward) and SIGCHLD (to
// wake up), and ignores SIGPIPE. Call once, before any worker starts.
void install_signal_handlers();

// The read end of the pipe; readable when a signal arrived.
int signal_fd();

// Empties the pipe (after poll reported it readable).
void drain_signal_pipe();

// The first SIGINT/SIGTERM/SIGHUP received and not yet taken, or 0.
int take_stop_signal();
// The same without taking it.
int pending_stop_signal();

// "SIGSEGV (Segmentation fault)", or "signal 77" for unknown numbers.
std::string signal_name(int sig);

}  // namespace brasarun
