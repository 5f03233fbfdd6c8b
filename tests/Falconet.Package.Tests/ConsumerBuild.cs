using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Shouldly;

namespace Falconet.Package.Tests;

/// <summary>Runs the dotnet CLI against the packed packages: the one pack, and builds of projects that use them.</summary>
internal static class ConsumerBuild
{
    /// <summary>The packages the one pack makes (README.md, "Pack it").</summary>
    public static readonly string[] PackageIds = { "Falconet", "Falconet.Generator", "Falconet.AspNetCore", "Falconet.Hosting" };

    public static string RepositoryRoot { get; } = FindRepositoryRoot();

    public static string Configuration { get; } = Metadata("Configuration");

    /// <summary>
    /// Packs everything a team needs, already built, with a version of its own into <paramref name="feed"/>: the command
    /// docs/custom-headers.md gives, with --no-build and a test version.
    /// </summary>
    public static async Task<string> PackAsync(string feed)
    {
        // A fresh version each run: NuGet caches a package by id and version, so reusing one would test an old build.
        string version = "0.1.0-test." + DateTime.UtcNow.ToString("yyyyMMddHHmmssfff", System.Globalization.CultureInfo.InvariantCulture);
        CommandResult pack = await RunAsync(RepositoryRoot, "pack", "Falconet.slnx", "-c", Configuration, "--no-build", "-o", feed, "-p:PackageVersion=" + version, "-nologo");
        pack.ShouldSucceed();
        foreach (string id in PackageIds)
        {
            File.Exists(Path.Combine(feed, id + "." + version + ".nupkg")).ShouldBeTrue(id + " was not packed:\n" + pack.Output);
        }

        return version;
    }

    /// <summary>A nuget.config whose sources are <paramref name="feed"/> and nuget.org (for the packages' own dependencies).</summary>
    public static string WriteNuGetConfig(string directory, string feed)
    {
        Directory.CreateDirectory(directory);
        string path = Path.Combine(directory, "nuget.config");
        File.WriteAllText(path, $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="local" value="{feed}" />
                <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
              </packageSources>
            </configuration>
            """);
        return path;
    }

    /// <summary>Writes a console app that references both packages at <paramref name="version"/>, with the given files.</summary>
    public static void WriteConsumer(string directory, string feed, string version, params (string Name, string Text)[] files)
    {
        WriteNuGetConfig(directory, feed);
        File.WriteAllText(Path.Combine(directory, "Consumer.csproj"), $"""
            <Project Sdk="Microsoft.NET.Sdk">
              <PropertyGroup>
                <OutputType>Exe</OutputType>
                <TargetFramework>net10.0</TargetFramework>
                <Nullable>enable</Nullable>
                <ImplicitUsings>enable</ImplicitUsings>
                <RootNamespace>Team.Api</RootNamespace>
              </PropertyGroup>
              <ItemGroup>
                <PackageReference Include="Falconet" Version="{version}" />
                <PackageReference Include="Falconet.Generator" Version="{version}" PrivateAssets="all" />
              </ItemGroup>
            </Project>
            """);
        foreach ((string name, string text) in files)
        {
            File.WriteAllText(Path.Combine(directory, name), text);
        }
    }

    public static Task<CommandResult> RunAsync(string workingDirectory, params string[] arguments)
    {
        ProcessStartInfo start = DotnetStartInfo(workingDirectory, arguments);
        return RunAsync(start);
    }

    /// <summary>The dotnet CLI with no telemetry, banner or build servers that would outlive the test.</summary>
    public static ProcessStartInfo DotnetStartInfo(string workingDirectory, params string[] arguments)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["MSBUILDDISABLENODEREUSE"] = "1";
        start.Environment["DOTNET_CLI_USE_MSBUILD_SERVER"] = "0";
        start.Environment["UseSharedCompilation"] = "false";
        return start;
    }

    /// <summary>Removes the test version from the machine's NuGet cache so repeated runs leave nothing behind.</summary>
    public static void ForgetCachedPackages(string version)
    {
        string cache = Environment.GetEnvironmentVariable("NUGET_PACKAGES")
            ?? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
        foreach (string id in PackageIds)
        {
            string folder = Path.Combine(cache, id.ToLowerInvariant(), version);
            if (Directory.Exists(folder))
            {
                Directory.Delete(folder, recursive: true);
            }
        }
    }

    public static void ShouldSucceed(this CommandResult result) =>
        result.ExitCode.ShouldBe(0, "the command failed:\n" + result.Output);

    private static async Task<CommandResult> RunAsync(ProcessStartInfo start)
    {
        using var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start");
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(5));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException("dotnet " + string.Join(' ', start.ArgumentList) + " ran past 5 minutes");
        }

        var output = new StringBuilder();
        output.Append("dotnet ").AppendJoin(' ', start.ArgumentList).AppendLine();
        output.Append(await stdout).Append(await stderr);
        return new CommandResult(process.ExitCode, output.ToString());
    }

    private static string Metadata(string key) =>
        typeof(ConsumerBuild).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!;

    private static string FindRepositoryRoot()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "Falconet.slnx")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException("Falconet.slnx not found above " + AppContext.BaseDirectory);
    }
}

/// <summary>The exit code and the combined output of one dotnet command.</summary>
internal sealed record CommandResult(int ExitCode, string Output);
