using System;
using System.Diagnostics;
using System.Threading.Tasks;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>Runs a real client (curl, openssl) to its end within the operation timeout.</summary>
internal static class ToolProcess
{
    /// <summary>Runs <paramref name="fileName"/> with <paramref name="arguments"/>; its exit code and what it wrote (standard error, then output).</summary>
    public static async Task<(int ExitCode, string Errors)> RunAsync(string fileName, params string[] arguments)
    {
        var start = new ProcessStartInfo(fileName) { RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start)!;
        Task<string> errors = process.StandardError.ReadToEndAsync();
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        try
        {
            await process.WaitForExitAsync().WaitAsync(TestTimeouts.Operation);
        }
        catch (TimeoutException)
        {
            process.Kill(entireProcessTree: true);
            throw;
        }

        return (process.ExitCode, await errors + await output);
    }
}
