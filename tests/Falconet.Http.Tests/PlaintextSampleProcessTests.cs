using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net.Http;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests;

/// <summary>
/// The built sample as its users run it: <c>dotnet Falconet.Samples.Plaintext.dll --port 0 --stats</c>, served over
/// HTTP, stopped with SIGINT. The project reference to the sample builds it and copies it next to the tests.
/// </summary>
public sealed partial class PlaintextSampleProcessTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Sample_serves_both_endpoints_then_stops_on_SIGINT_and_prints_its_stats()
    {
        using Process sample = StartSample("--port", "0", "--stats");
        try
        {
            using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
            string? banner = await sample.StandardOutput.ReadLineAsync(timeout.Token);
            Match listening = ListeningLine().Match(banner ?? string.Empty);
            listening.Success.ShouldBeTrue($"unexpected first line: {banner}");

            using var http = new HttpClient { BaseAddress = new Uri(listening.Groups["url"].Value + "/"), Timeout = TestTimeouts.Operation };
            using (HttpResponseMessage plaintext = await http.GetAsync("plaintext"))
            {
                await CheckTechEmpowerResponse(plaintext, "text/plain", "Hello, World!");
            }

            using (HttpResponseMessage json = await http.GetAsync("json"))
            {
                await CheckTechEmpowerResponse(json, "application/json", "{\"message\":\"Hello, World!\"}");
            }

            SendSigint(sample.Id);
            await sample.WaitForExitAsync(timeout.Token);
            string rest = await sample.StandardOutput.ReadToEndAsync(timeout.Token);
            string errors = await sample.StandardError.ReadToEndAsync(timeout.Token);

            sample.ExitCode.ShouldBe(0, $"stderr: {errors}");
            Match stats = StatsLine().Match(rest);
            stats.Success.ShouldBeTrue($"no stats line in: {rest}");
            long.Parse(stats.Groups["requests"].Value, CultureInfo.InvariantCulture).ShouldBe(2);
        }
        finally
        {
            if (!sample.HasExited)
            {
                sample.Kill();
            }
        }
    }

    private static async Task CheckTechEmpowerResponse(HttpResponseMessage response, string contentType, string body)
    {
        ((int)response.StatusCode).ShouldBe(200);
        response.Version.ShouldBe(new Version(1, 1));
        response.Headers.Server.ToString().ShouldBe("Falconet");
        response.Headers.Date.ShouldNotBeNull();
        response.Headers.GetValues("Date").ShouldHaveSingleItem().Length.ShouldBe(29);
        response.Content.Headers.ContentType!.ToString().ShouldBe(contentType);
        response.Content.Headers.ContentLength.ShouldBe(body.Length);
        (await response.Content.ReadAsStringAsync()).ShouldBe(body);
    }

    private static Process StartSample(params string[] arguments)
    {
        string assembly = Path.Combine(AppContext.BaseDirectory, "Falconet.Samples.Plaintext.dll");
        File.Exists(assembly).ShouldBeTrue($"the sample was not built next to the tests: {assembly}");
        var start = new ProcessStartInfo(DotnetHost())
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(assembly);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        return Process.Start(start) ?? throw new InvalidOperationException("The sample did not start.");
    }

    /// <summary>The dotnet host running these tests: the same runtime runs the sample.</summary>
    private static string DotnetHost()
    {
        string executable = RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "dotnet.exe" : "dotnet";
        if (Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } hostPath && File.Exists(hostPath))
        {
            return hostPath;
        }

        if (Environment.ProcessPath is { } processPath && Path.GetFileName(processPath) == executable)
        {
            return processPath;
        }

        // The runtime lives in <root>/shared/Microsoft.NETCore.App/<version>/, the host in <root>.
        string root = Path.GetFullPath(Path.Combine(RuntimeEnvironment.GetRuntimeDirectory(), "..", "..", ".."));
        return Path.Combine(root, executable);
    }

    /// <summary>Sends SIGINT, as Ctrl+C in a terminal does.</summary>
    private static void SendSigint(int processId)
    {
        using Process kill = Process.Start(new ProcessStartInfo("kill")
        {
            ArgumentList = { "-INT", processId.ToString(CultureInfo.InvariantCulture) },
            UseShellExecute = false,
        }) ?? throw new InvalidOperationException("kill did not start.");
        kill.WaitForExit();
        kill.ExitCode.ShouldBe(0);
    }

    [GeneratedRegex(@"^Falconet listening on (?<url>http://127\.0\.0\.1:\d+) .* with the libuv transport;")]
    private static partial Regex ListeningLine();

    [GeneratedRegex(@"^requests=(?<requests>\d+) allocated_bytes_per_request=\d+\.\d{2} gen0=\d+ gen1=\d+ gen2=\d+ accepted_per_loop=\d+(/\d+)*$", RegexOptions.Multiline)]
    private static partial Regex StatsLine();
}
