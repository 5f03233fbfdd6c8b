using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;

namespace Falconet.Benchmarks;

/// <summary>The request header names of schema/known-headers.json with their generated bit index, for the dictionary baselines.</summary>
internal static class KnownHeaderNames
{
    /// <summary>Content-Length is kept outside the bit set; the generated code gives it this index.</summary>
    public const int ContentLengthIndex = 64;

    /// <summary>Name to bit index, in schema order, case-insensitive.</summary>
    public static Dictionary<string, int> LoadRequestHeaderIndexes()
    {
        using JsonDocument schema = JsonDocument.Parse(File.ReadAllText(Path.Combine(FindRepositoryRoot(), "schema", "known-headers.json")));
        var indexes = new Dictionary<string, int>(StringComparer.OrdinalIgnoreCase);
        int bit = 0;
        foreach (JsonElement header in schema.RootElement.GetProperty("requestHeaders").EnumerateArray())
        {
            string name = header.GetProperty("name").GetString()!;
            bool contentLength = header.TryGetProperty("contentLength", out JsonElement flag) && flag.GetBoolean();
            indexes.Add(name, contentLength ? ContentLengthIndex : bit++);
        }

        return indexes;
    }

    // BenchmarkDotNet runs each benchmark from a generated folder below bin/, which is still inside the repository.
    private static string FindRepositoryRoot()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "schema", "known-headers.json")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException("No folder above " + AppContext.BaseDirectory + " holds schema/known-headers.json.");
    }
}
