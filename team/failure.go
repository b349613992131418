package team

// failure is a Failure of a step that err ended; a full or read-only disk
// is a storage failure whatever the step. The text is prefix + err.
func failure(class ErrorClass, prefix string, err error) Failure {
	if _, ok := AsStorageError(err).(*StorageError); ok {
		class = ClassStorage
	}
	return Failure{Class: class, Text: prefix + err.Error()}
}
