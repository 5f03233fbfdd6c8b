using System;
using System.Collections.Generic;
using System.Text;
using System.Text.Json;

namespace Falconet.Generator.Schema;

/// <summary>Reads one schema file with <see cref="Utf8JsonReader"/>, keeping a location for every entry and problem.</summary>
internal static partial class SchemaReader
{
    /// <summary>The longest method a schema may name (characters, without the space after it): the parser's own limit, so it accepts every method the matcher knows.</summary>
    public const int MaxMethodLength = Falconet.Text.HttpTokenChars.MaxMethodLength;

    private static readonly JsonReaderOptions s_options = new()
    {
        CommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
    };

    public static SchemaFile Read(string path, string text)
    {
        // A byte order mark left in the text (hosts that do not strip it) becomes a space: same column, valid JSON.
        if (text.Length > 0 && text[0] == '\uFEFF')
        {
            text = " " + text.Substring(1);
        }

        byte[] utf8 = Encoding.UTF8.GetBytes(text);
        var context = new ReadContext(path, new SourcePositions(path, utf8));
        var reader = new Utf8JsonReader(utf8, s_options);
        try
        {
            ReadRoot(ref reader, context);
        }
        catch (JsonException exception)
        {
            int offset = context.Positions.ByteOffset(exception.LineNumber ?? 0, exception.BytePositionInLine ?? 0);
            context.Report(DiagnosticDescriptors.InvalidJson, context.Positions.Locate(offset, 0), TrimPosition(exception.Message));
        }

        return context.ToFile();
    }

    private static void ReadRoot(ref Utf8JsonReader reader, ReadContext context)
    {
        if (!reader.Read())
        {
            return;
        }

        if (reader.TokenType != JsonTokenType.StartObject)
        {
            context.Report(DiagnosticDescriptors.WrongValueType, Locate(ref reader, context), "The schema root", "an object", Describe(reader.TokenType));
            reader.Skip();
            return;
        }

        var seen = new HashSet<string>(StringComparer.Ordinal);
        while (NextProperty(ref reader, context, seen, "the schema root", out string property) is { } propertyLocation)
        {
            switch (property)
            {
                case "$schema":
                    ExpectString(ref reader, context, "$schema");
                    break;
                case "methods":
                    ReadArray(ref reader, context, "methods", ReadMethod);
                    break;
                case "versions":
                    ReadArray(ref reader, context, "versions", ReadVersion);
                    break;
                case "requestHeaders":
                    ReadArray(ref reader, context, "requestHeaders", (ref Utf8JsonReader r, ReadContext c) => ReadHeader(ref r, c, c.RequestHeaders));
                    break;
                case "responseHeaders":
                    ReadArray(ref reader, context, "responseHeaders", (ref Utf8JsonReader r, ReadContext c) => ReadHeader(ref r, c, c.ResponseHeaders));
                    break;
                case "hpack":
                    context.HPack = ReadHPack(ref reader, context, propertyLocation);
                    break;
                default:
                    context.Report(DiagnosticDescriptors.UnknownProperty, propertyLocation, property, "the schema root");
                    reader.Skip();
                    break;
            }
        }

        // Reading past the end validates that nothing but comments and whitespace follows the root object.
        while (reader.Read())
        {
        }
    }

    private delegate void ItemReader(ref Utf8JsonReader reader, ReadContext context);

    private static void ReadArray(ref Utf8JsonReader reader, ReadContext context, string name, ItemReader readItem)
    {
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            context.Report(DiagnosticDescriptors.WrongValueType, Locate(ref reader, context), "'" + name + "'", "an array", Describe(reader.TokenType));
            reader.Skip();
            return;
        }

        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            readItem(ref reader, context);
        }
    }

    private static void ReadMethod(ref Utf8JsonReader reader, ReadContext context)
    {
        if (!ExpectString(ref reader, context, "A method"))
        {
            return;
        }

        string name = reader.GetString()!;
        LocationInfo location = Locate(ref reader, context);
        if (!ValidateToken(context, "Method", name, location))
        {
            return;
        }

        if (name.Length > MaxMethodLength)
        {
            context.Report(DiagnosticDescriptors.MethodTooLong, location, name, name.Length.ToString(System.Globalization.CultureInfo.InvariantCulture), MaxMethodLength.ToString(System.Globalization.CultureInfo.InvariantCulture));
            return;
        }

        context.Methods.Add(new NamedEntry(name, location));
    }

    private static void ReadVersion(ref Utf8JsonReader reader, ReadContext context)
    {
        if (!ExpectString(ref reader, context, "A version"))
        {
            return;
        }

        string name = reader.GetString()!;
        LocationInfo location = Locate(ref reader, context);
        if (!IsVersion(name))
        {
            context.Report(DiagnosticDescriptors.BadVersion, location, name);
            return;
        }

        context.Versions.Add(new NamedEntry(name, location));
    }

    private static void ReadHeader(ref Utf8JsonReader reader, ReadContext context, List<HeaderEntry> target)
    {
        LocationInfo objectLocation = Locate(ref reader, context);
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            context.Report(DiagnosticDescriptors.WrongValueType, objectLocation, "A header", "an object", Describe(reader.TokenType));
            reader.Skip();
            return;
        }

        string? name = null;
        bool nameMistyped = false;
        LocationInfo nameLocation = objectLocation;
        bool primary = false;
        bool contentLength = false;
        LocationInfo contentLengthLocation = objectLocation;
        var values = new List<(string Value, LocationInfo Location)>();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        while (NextProperty(ref reader, context, seen, "a header", out string property) is { } propertyLocation)
        {
            switch (property)
            {
                case "name":
                    if (ExpectString(ref reader, context, "'name'"))
                    {
                        name = reader.GetString()!;
                        nameLocation = Locate(ref reader, context);
                    }
                    else
                    {
                        nameMistyped = true;
                    }

                    break;
                case "primary":
                    primary = ReadBoolean(ref reader, context, "'primary'");
                    break;
                case "contentLength":
                    contentLengthLocation = Locate(ref reader, context);
                    contentLength = ReadBoolean(ref reader, context, "'contentLength'");
                    break;
                case "values":
                    ReadArray(ref reader, context, "values", (ref Utf8JsonReader r, ReadContext c) =>
                    {
                        if (ExpectString(ref r, c, "A known value"))
                        {
                            values.Add((r.GetString()!, Locate(ref r, c)));
                        }
                    });
                    break;
                default:
                    context.Report(DiagnosticDescriptors.UnknownProperty, propertyLocation, property, "a header");
                    reader.Skip();
                    break;
            }
        }

        if (name is null)
        {
            // A name of the wrong type was reported where it stands; only a missing one is reported here.
            if (!nameMistyped)
            {
                context.Report(DiagnosticDescriptors.EmptyName, objectLocation, "Header");
            }

            return;
        }

        if (!ValidateToken(context, "Header", name, nameLocation))
        {
            return;
        }

        if (contentLength && !string.Equals(name, "Content-Length", StringComparison.OrdinalIgnoreCase))
        {
            context.Report(DiagnosticDescriptors.ContentLengthFlag, contentLengthLocation, name, "sets contentLength but is not Content-Length");
            contentLength = false;
        }

        var accepted = new List<string>();
        foreach ((string value, LocationInfo location) in values)
        {
            string? problem = ValueProblem(value);
            if (problem is not null)
            {
                context.Report(DiagnosticDescriptors.InvalidKnownValue, location, value, name, problem);
            }
            else if (accepted.Contains(value))
            {
                context.Report(DiagnosticDescriptors.DuplicateName, location, "Known value", value, " for header '" + name + "'");
            }
            else
            {
                accepted.Add(value);
            }
        }

        target.Add(new HeaderEntry(name, nameLocation, primary, contentLength, EquatableArray.From(accepted)));
    }

    private static bool ValidateToken(ReadContext context, string kind, string name, LocationInfo location)
    {
        if (name.Length == 0)
        {
            context.Report(DiagnosticDescriptors.EmptyName, location, kind);
            return false;
        }

        foreach (char c in name)
        {
            if (!HttpToken.IsTokenChar(c))
            {
                context.Report(DiagnosticDescriptors.NonTokenCharacter, location, kind, name, c.ToString());
                return false;
            }
        }

        return true;
    }

    private static bool IsVersion(string text) =>
        text.Length == 8 && text.StartsWith("HTTP/", StringComparison.Ordinal)
        && text[5] >= '0' && text[5] <= '9' && text[6] == '.' && text[7] >= '0' && text[7] <= '9';

    private static string? ValueProblem(string value)
    {
        if (value.Length == 0)
        {
            return "is empty";
        }

        foreach (char c in value)
        {
            bool allowed = c == '\t' || (c >= ' ' && c <= '~');
            if (!allowed)
            {
                return "contains the character U+" + ((int)c).ToString("X4", System.Globalization.CultureInfo.InvariantCulture) + " that a header value cannot hold";
            }
        }

        return value[0] is ' ' or '\t' || value[value.Length - 1] is ' ' or '\t' ? "starts or ends with whitespace, which the parser trims" : null;
    }

    /// <summary>
    /// Moves to the next property of the object being read and onto its value, and returns the property's location; a
    /// property the object had already is reported (FALC015, for <paramref name="owner"/>) and skipped. Null at the end of
    /// the object.
    /// </summary>
    private static LocationInfo? NextProperty(ref Utf8JsonReader reader, ReadContext context, HashSet<string> seen, string owner, out string property)
    {
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            property = reader.GetString()!;
            LocationInfo location = Locate(ref reader, context);
            reader.Read();
            if (seen.Add(property))
            {
                return location;
            }

            context.Report(DiagnosticDescriptors.DuplicateProperty, location, property, owner);
            reader.Skip();
        }

        property = string.Empty;
        return null;
    }

    private static bool ExpectString(ref Utf8JsonReader reader, ReadContext context, string what)
    {
        if (reader.TokenType == JsonTokenType.String)
        {
            return true;
        }

        context.Report(DiagnosticDescriptors.WrongValueType, Locate(ref reader, context), what, "a string", Describe(reader.TokenType));
        reader.Skip();
        return false;
    }

    private static bool ReadBoolean(ref Utf8JsonReader reader, ReadContext context, string what)
    {
        if (reader.TokenType is JsonTokenType.True or JsonTokenType.False)
        {
            return reader.GetBoolean();
        }

        context.Report(DiagnosticDescriptors.WrongValueType, Locate(ref reader, context), what, "a boolean", Describe(reader.TokenType));
        reader.Skip();
        return false;
    }

    private static LocationInfo Locate(ref Utf8JsonReader reader, ReadContext context)
    {
        long length = reader.TokenType switch
        {
            JsonTokenType.String or JsonTokenType.PropertyName => reader.ValueSpan.Length + 2,
            JsonTokenType.StartObject or JsonTokenType.StartArray => 1,
            _ => reader.ValueSpan.Length,
        };
        return context.Positions.Locate(reader.TokenStartIndex, length);
    }

    private static string Describe(JsonTokenType token) => token switch
    {
        JsonTokenType.StartObject => "an object",
        JsonTokenType.StartArray => "an array",
        JsonTokenType.String => "a string",
        JsonTokenType.Number => "a number",
        JsonTokenType.True or JsonTokenType.False => "a boolean",
        JsonTokenType.Null => "null",
        _ => token.ToString(),
    };

    private static string TrimPosition(string message)
    {
        int index = message.IndexOf(" LineNumber:", StringComparison.Ordinal);
        return (index > 0 ? message.Substring(0, index) : message).TrimEnd(' ', '.');
    }

    private sealed class ReadContext
    {
        private readonly List<DiagnosticInfo> _diagnostics = new();

        public ReadContext(string path, SourcePositions positions)
        {
            Path = path;
            Positions = positions;
        }

        public string Path { get; }

        public SourcePositions Positions { get; }

        public List<NamedEntry> Methods { get; } = new();

        public List<NamedEntry> Versions { get; } = new();

        public List<HeaderEntry> RequestHeaders { get; } = new();

        public List<HeaderEntry> ResponseHeaders { get; } = new();

        public HPackSection? HPack { get; set; }

        public int ErrorCount => _diagnostics.Count;

        public void Report(Microsoft.CodeAnalysis.DiagnosticDescriptor descriptor, LocationInfo location, params string[] arguments) =>
            _diagnostics.Add(DiagnosticInfo.Create(descriptor, location, arguments));

        public SchemaFile ToFile() => new(
            Path,
            EquatableArray.From(Methods),
            EquatableArray.From(Versions),
            EquatableArray.From(RequestHeaders),
            EquatableArray.From(ResponseHeaders),
            EquatableArray.From(_diagnostics),
            HPack);
    }
}
