using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Threading.Tasks;

namespace Falconet.Package.Tests;

/// <summary>Runs the dotnet CLI against the packed generator and a throwaway consumer project.</summary>
internal static class ConsumerBuild
{
    public static string RepositoryRoot { get; } = FindRepositoryRoot();

    public static string Configuration { get; } = Metadata("Configuration");

    public static string PrimitivesVersion { get; } = Metadata("MicrosoftExtensionsPrimitivesVersion");

    /// <summary>Packs the already-built generator with a version of its own into <paramref name="feed"/>.</summary>
    public static async Task<string> PackGeneratorAsync(string feed)
    {
        // A fresh version each run: NuGet caches a package by id and version, so reusing one would test an old build.
        string version = "0.1.0-test." + DateTime.UtcNow.ToString("yyyyMMddHHmmssfff", System.Globalization.CultureInfo.InvariantCulture);
        string project = Path.Combine(RepositoryRoot, "generator", "Falconet.Generator.csproj");
        CommandResult pack = await RunAsync(RepositoryRoot, "pack", project, "-c", Configuration, "--no-build", "-o", feed, "-p:PackageVersion=" + version, "-nologo");
        pack.ExitCode.ShouldSucceed(pack.Output);
        return version;
    }

    /// <summary>Writes a console app that references the packed generator and carries <paramref name="schema"/> as team.headers.json.</summary>
    public static void WriteConsumer(string directory, string feed, string version, string schema, string program)
    {
        Directory.CreateDirectory(directory);
        File.WriteAllText(Path.Combine(directory, "NuGet.config"), $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="local" value="{feed}" />
                <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
              </packageSources>
            </configuration>
            """);
        File.WriteAllText(Path.Combine(directory, "Consumer.csproj"), $"""
            <Project Sdk="Microsoft.NET.Sdk">
              <PropertyGroup>
                <OutputType>Exe</OutputType>
                <TargetFramework>net10.0</TargetFramework>
                <Nullable>enable</Nullable>
                <ImplicitUsings>enable</ImplicitUsings>
                <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
                <RootNamespace>Team.Api</RootNamespace>
              </PropertyGroup>
              <ItemGroup>
                <PackageReference Include="Falconet.Generator" Version="{version}" PrivateAssets="all" />
                <PackageReference Include="Microsoft.Extensions.Primitives" Version="{PrimitivesVersion}" />
                <AdditionalFiles Include="team.headers.json" />
              </ItemGroup>
            </Project>
            """);
        File.WriteAllText(Path.Combine(directory, "team.headers.json"), schema);
        File.WriteAllText(Path.Combine(directory, "Program.cs"), program);
    }

    public static Task<CommandResult> RunAsync(string workingDirectory, params string[] arguments)
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
        return RunAsync(start);
    }

    /// <summary>Removes the test version from the machine's NuGet cache so repeated runs leave nothing behind.</summary>
    public static void ForgetCachedPackage(string version)
    {
        string cache = Environment.GetEnvironmentVariable("NUGET_PACKAGES")
            ?? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
        string folder = Path.Combine(cache, "falconet.generator", version);
        if (Directory.Exists(folder))
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    private static async Task<CommandResult> RunAsync(ProcessStartInfo start)
    {
        using var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start");
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new System.Threading.CancellationTokenSource(TimeSpan.FromMinutes(5));
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

internal static class CommandResultAssertions
{
    public static void ShouldSucceed(this int exitCode, string output)
    {
        Assert.True(exitCode == 0, "the command failed:\n" + output);
    }
}
