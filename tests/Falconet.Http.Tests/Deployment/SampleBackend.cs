using System;
using System.Collections.Generic;
using System.Globalization;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Deployment;

/// <summary>
/// One sample process behind a load balancer, restartable on the same port (or Unix socket): <see cref="RestartAsync"/>
/// sends SIGTERM, waits for the graceful exit, and starts it again as a process manager would.
/// </summary>
internal sealed class SampleBackend : IDisposable
{
    private readonly List<string> _arguments;
    private SampleProcess _process;

    private SampleBackend(List<string> arguments, SampleProcess process, int port)
    {
        _arguments = arguments;
        _process = process;
        Port = port;
    }

    /// <summary>The TCP port it listens on (the same after every restart).</summary>
    public int Port { get; }

    /// <summary>Exit codes and the last lines of every process stopped so far.</summary>
    public List<string> Stops { get; } = new();

    /// <summary>Starts the sample on a free port with <paramref name="arguments"/>.</summary>
    public static async Task<SampleBackend> StartAsync(params string[] arguments)
    {
        var all = new List<string>(arguments) { "--port", "0" };
        SampleProcess process = SampleProcess.Start(descriptorLimit: null, all.ToArray());
        Uri url = await process.WaitUntilListeningAsync();
        all[^1] = url.Port.ToString(CultureInfo.InvariantCulture);
        return new SampleBackend(all, process, url.Port);
    }

    /// <summary>SIGTERM (a graceful stop: unready, the drain delay, the drain), then the same command again.</summary>
    public async Task RestartAsync()
    {
        (int exitCode, string output, string errors) = await _process.TerminateAsync();
        Stops.Add($"exit {exitCode}: {output.Trim()} {errors.Trim()}");
        exitCode.ShouldBe(0, errors);
        _process.Dispose();
        _process = SampleProcess.Start(descriptorLimit: null, _arguments.ToArray());
        await _process.WaitUntilListeningAsync();
    }

    /// <summary>
    /// Starts the same command again beside the running process (it takes its Unix socket path over, or shares its port with
    /// SO_REUSEPORT: the arguments must ask for --reuseport), then SIGTERM to the old one, as a start-then-stop restart does.
    /// </summary>
    public async Task ReplaceAsync()
    {
        SampleProcess next = SampleProcess.Start(descriptorLimit: null, _arguments.ToArray());
        await next.WaitUntilListeningAsync();
        (int exitCode, string output, string errors) = await _process.TerminateAsync();
        Stops.Add($"exit {exitCode}: {output.Trim()} {errors.Trim()}");
        _process.Dispose();
        _process = next;
        exitCode.ShouldBe(0, errors);
    }

    public void Dispose() => _process.Dispose();
}
