#include "signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace brasarun {

namespace {

int g_pipe[2] = {-1, -1};
std::atomic<int> g_stop_signal{0};

void on_signal(int sig) {
  int saved = errno;
  if (sig != SIGCHLD) {
    int expected = 0;
    g_stop_signal.compare_exchange_strong(expected, sig);
  }
  char c = static_cast<char>(sig);
  (void)!::write(g_pipe[1], &c, 1);  // full pipe: a wake-up is pending anyway
  errno = saved;
}

}  // namespace

void install_signal_handlers() {
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("brasarun: pipe2: ") + std::strerror(errno));
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

int signal_fd() { return g_pipe[0]; }

void drain_signal_pipe() {
  char buf[64];
  while (::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

int take_stop_signal() { return g_stop_signal.exchange(0); }

int pending_stop_signal() { return g_stop_signal.load(); }

std::string signal_name(int sig) {
  static const struct {
    int number;
    const char* name;
  } kNames[] = {{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
                {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
                {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
                {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
                {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
                {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
  for (const auto& n : kNames)
    if (n.number == sig) return std::string(n.name) + " (" + ::strsignal(sig) + ")";
  return "signal " + std::to_string(sig);
}

}  // namespace brasarun
