using System;
using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;
using Xunit;

namespace Falconet.Http.Tests.Deployment;

/// <summary>
/// systemd socket activation with systemd-socket-activate (the real tool) holding the listening socket, and a small
/// supervisor (socket-activation-supervisor.sh) that restarts the sample the way systemd restarts a service.
/// </summary>
[Collection(LoadBalancerCollection.Name)]
public sealed class SocketActivationTests
{
    [SkippableFact]
    public async Task A_restart_under_socket_activation_without_a_load_balancer_loses_no_request()
    {
        string? activate = ExternalProcess.Find("systemd-socket-activate");
        Skip.If(activate is null, "systemd-socket-activate is not installed here (CI installs it: .ci/run)");
        int port = ExternalProcess.FreePort();
        string supervisor = Path.Combine(AppContext.BaseDirectory, "Deployment", "socket-activation-supervisor.sh");
        string sample = Path.Combine(AppContext.BaseDirectory, "Falconet.Samples.Plaintext.dll");
        using ExternalProcess service = ExternalProcess.Start(activate!,
        [
            "-l", $"127.0.0.1:{port}", "--fdname=http", "/bin/bash", supervisor,
            SampleProcess.DotnetHost(), sample, "--shutdown-timeout", "5",
            .. (Environment.GetEnvironmentVariable("FALCONET_DRAIN_EXPERIMENT") is { } extra ? extra.Split(' ') : []),
        ]);
        var endpoint = new IPEndPoint(IPAddress.Loopback, port);

        // systemd-socket-activate starts the service on the first connection.
        await ExternalProcess.WaitUntilServingAsync(endpoint, "/plaintext", service);
        await WaitForBannersAsync(service, 1);
        service.Output.ShouldContain($"http://127.0.0.1:{port}");

        await LoadBalancerTests.RollingRestartUnderLoadAsync(endpoint, service, async () =>
        {
            Signal(service, "HUP");
            await WaitForBannersAsync(service, 2);
        });
    }

    private static async Task WaitForBannersAsync(ExternalProcess service, int count)
    {
        using var deadline = new CancellationTokenSource(TestTimeouts.Operation);
        while (Occurrences(service.Output, "Falconet listening on") < count)
        {
            deadline.IsCancellationRequested.ShouldBeFalse($"the service did not start {count} times: {service.Output}");
            await Task.Delay(50);
        }
    }

    private static int Occurrences(string text, string value)
    {
        int count = 0;
        for (int at = text.IndexOf(value, StringComparison.Ordinal); at >= 0; at = text.IndexOf(value, at + 1, StringComparison.Ordinal))
        {
            count++;
        }

        return count;
    }

    private static void Signal(ExternalProcess process, string signal)
    {
        using var kill = System.Diagnostics.Process.Start("kill", $"-{signal} {process.Process.Id}");
        kill.WaitForExit();
        kill.ExitCode.ShouldBe(0);
    }
}
