using System.IO;
using System.Text;

namespace Falconet.Generator.Schema;

/// <summary>The default schema (the repository's schema/known-headers.json), embedded in the generator and read once.</summary>
internal static class DefaultSchema
{
    /// <summary>The path reported for locations inside the default schema.</summary>
    public const string Path = "known-headers.json";

    private static SchemaFile? s_file;

    /// <summary>The raw JSON text of the default schema.</summary>
    public static string Text { get; } = LoadText();

    /// <summary>The parsed default schema.</summary>
    public static SchemaFile File => s_file ??= SchemaReader.Read(Path, Text);

    private static string LoadText()
    {
        using Stream stream = typeof(DefaultSchema).Assembly.GetManifestResourceStream("Falconet.Generator.known-headers.json")!;
        using var reader = new StreamReader(stream, Encoding.UTF8);
        return reader.ReadToEnd();
    }
}
