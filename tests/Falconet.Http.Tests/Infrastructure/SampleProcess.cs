using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Shouldly;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// The built sample (<c>Falconet.Samples.Plaintext.dll</c>, copied next to the tests by the project reference) run as
/// its users run it, optionally with a lower limit of open file descriptors than this process has.
/// </summary>
internal sealed partial class SampleProcess : IDisposable
{
    private SampleProcess(Process process)
    {
        Process = process;
    }

    public Process Process { get; }

    /// <summary>The first line the sample printed (read by <see cref="WaitUntilListeningAsync"/>).</summary>
    public string Banner { get; private set; } = string.Empty;

    /// <summary>Starts the sample with <paramref name="arguments"/>; with <paramref name="descriptorLimit"/>, under <c>ulimit -n</c> of that many.</summary>
    public static SampleProcess Start(int? descriptorLimit, params string[] arguments) => StartWithHook(descriptorLimit, startupHook: null, arguments);

    /// <summary>Starts the sample as <see cref="Start(int?, string[])"/> does, with <paramref name="startupHook"/> (an assembly path) run in it before its Main.</summary>
    public static SampleProcess StartWithHook(int? descriptorLimit, string? startupHook, params string[] arguments)
        => StartWithHook(descriptorLimit, startupHook, environment: null, normalScheduling: false, arguments);

    /// <summary>
    /// Starts the sample as <see cref="StartWithHook(int?, string?, string[])"/> does, with <paramref name="environment"/> added to
    /// its environment; with <paramref name="normalScheduling"/> under <c>chrt -o 0</c>, so that its threads start under
    /// SCHED_OTHER whatever this process's thread runs under (a server of another test may have put it under SCHED_BATCH,
    /// which a child inherits).
    /// </summary>
    public static SampleProcess StartWithHook(int? descriptorLimit, string? startupHook, IReadOnlyDictionary<string, string>? environment,
        bool normalScheduling, params string[] arguments)
    {
        string assembly = Path.Combine(AppContext.BaseDirectory, "Falconet.Samples.Plaintext.dll");
        File.Exists(assembly).ShouldBeTrue($"the sample was not built next to the tests: {assembly}");
        var command = new List<string>();
        if (descriptorLimit is int limit)
        {
            // The limit can only be lowered for a child: the shell lowers its own, then becomes the sample (same pid).
            command.AddRange(["/bin/sh", "-c", $"ulimit -n {limit.ToString(CultureInfo.InvariantCulture)} && exec \"$@\"", "sh"]);
        }

        if (normalScheduling)
        {
            command.AddRange(["chrt", "-o", "0"]);
        }

        command.Add(DotnetHost());
        var start = new ProcessStartInfo(command[0]);
        foreach (string part in command.Skip(1))
        {
            start.ArgumentList.Add(part);
        }

        start.ArgumentList.Add(assembly);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        if (startupHook is not null)
        {
            start.Environment["DOTNET_STARTUP_HOOKS"] = startupHook;
        }

        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        start.UseShellExecute = false;
        return new SampleProcess(Process.Start(start) ?? throw new InvalidOperationException("The sample did not start."));
    }

    /// <summary>Reads the banner and returns the URL the sample listens on.</summary>
    public async Task<Uri> WaitUntilListeningAsync()
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        string? banner = await Process.StandardOutput.ReadLineAsync(timeout.Token);
        Banner = banner ?? string.Empty;
        Match listening = ListeningLine().Match(banner ?? string.Empty);
        listening.Success.ShouldBeTrue($"unexpected first line: {banner}; stderr: {(Process.HasExited ? await Process.StandardError.ReadToEndAsync() : "")}");
        return new Uri(listening.Groups["url"].Value + "/");
    }

    /// <summary>Sends SIGINT, as Ctrl+C in a terminal does, and waits for the exit; returns the rest of stdout and stderr.</summary>
    public Task<(int ExitCode, string Output, string Errors)> InterruptAsync() => SignalAsync("INT");

    /// <summary>Sends SIGTERM, as a service manager or an orchestrator stops a process, and waits for the exit.</summary>
    public Task<(int ExitCode, string Output, string Errors)> TerminateAsync() => SignalAsync("TERM");

    private async Task<(int ExitCode, string Output, string Errors)> SignalAsync(string signal)
    {
        using (Process kill = Process.Start(new ProcessStartInfo("kill")
        {
            ArgumentList = { "-" + signal, Process.Id.ToString(CultureInfo.InvariantCulture) },
            UseShellExecute = false,
        }) ?? throw new InvalidOperationException("kill did not start."))
        {
            kill.WaitForExit();
            kill.ExitCode.ShouldBe(0);
        }

        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        await Process.WaitForExitAsync(timeout.Token);
        string output = await Process.StandardOutput.ReadToEndAsync(timeout.Token);
        string errors = await Process.StandardError.ReadToEndAsync(timeout.Token);
        return (Process.ExitCode, output, errors);
    }

    /// <summary>Waits for a sample that ends by itself (a start that fails); returns its exit code, stdout and stderr.</summary>
    public async Task<(int ExitCode, string Output, string Errors)> WaitForExitAsync()
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        Task<string> output = Process.StandardOutput.ReadToEndAsync(timeout.Token);
        Task<string> errors = Process.StandardError.ReadToEndAsync(timeout.Token);
        await Process.WaitForExitAsync(timeout.Token);
        return (Process.ExitCode, await output, await errors);
    }

    public void Dispose()
    {
        if (!Process.HasExited)
        {
            Process.Kill();
        }

        Process.Dispose();
    }

    /// <summary>The dotnet host running these tests: the same runtime runs the sample.</summary>
    internal static string DotnetHost()
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

    [GeneratedRegex(@"^Falconet listening on (?<url>http://127\.0\.0\.1:\d+) ")]
    private static partial Regex ListeningLine();
}
