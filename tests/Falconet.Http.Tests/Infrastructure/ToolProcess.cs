using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>Runs a real client (curl, openssl, nghttp) to its end within the operation timeout.</summary>
internal static class ToolProcess
{
    /// <summary>Runs <paramref name="tool"/> with <paramref name="input"/> on its standard input; its exit code and everything it printed (output, then errors).</summary>
    public static async Task<(int ExitCode, string Output)> RunAsync(string tool, string? input, params string[] arguments)
    {
        var start = new ProcessStartInfo(tool)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"{tool} did not start.");
        if (input is not null)
        {
            await process.StandardInput.WriteAsync(input);
        }

        process.StandardInput.Close();
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        Task<string> output = process.StandardOutput.ReadToEndAsync(timeout.Token);
        Task<string> errors = process.StandardError.ReadToEndAsync(timeout.Token);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw;
        }

        return (process.ExitCode, await output + await errors);
    }
}
